// The collectives' shared pieces (ccl.cc, ccl_neighbor_pad.cc): op descriptors, the group-wide
// agreement on them, shape arithmetic and row regions.
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "mesh/communicator.h"
#include "meshnn/core/tensor.h"

namespace meshnn::mesh_detail {

enum Op : int32_t { kAllGather = 1, kReduceScatter, kNeighborPad };

const char* op_name(int32_t op);
Shape desc_shape(const OpDesc& d);
OpDesc make_desc(int32_t op, const Tensor& t, int device, std::initializer_list<int64_t> args);
// dim normalised against rank r; ShapeError when out of range.
int norm_dim(int64_t dim, int r, const char* what = "dim");
void check_rank(const OpDesc& d);

// Runs `check` on every member's descriptor in member order and compares them with member 0's,
// so every member raises the same error. `check` gets (desc, group size).
using CheckFn = std::function<void(const OpDesc&, int)>;
void validate_all(const std::vector<OpDesc>& all, const CheckFn& check);
// One collective's agreement: the local check first (so a bad device does no work), then the
// exchange, then every member validates every descriptor.
void agree(Communicator* c, const OpDesc& mine, const void* data, const CheckFn& check);

int64_t prod(const Shape& s, int from, int to);
std::string key_of(const char* op, const Shape& s, DType dt, const std::vector<int64_t>& args);
// Rows [r0, r0 + len) along dim d of a tensor of shape s (element size esize) as a Region.
Region rows_region(const Shape& s, int d, size_t esize, int64_t r0, int64_t len);

}  // namespace meshnn::mesh_detail
