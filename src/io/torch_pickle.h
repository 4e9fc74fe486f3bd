// The restricted unpickler behind io::TorchCheckpoint: runs the `data.pkl` of a torch.save archive
// and accepts only what a state dict of tensors needs — the opcodes and globals of PyTorch's
// weights_only unpickler (torch/_weights_only_unpickler.py), narrowed to the tensor types meshnn
// holds. Nothing is ever imported or called: an allowed global is a tag, and REDUCE on a tag
// builds the one value that tag stands for.
//
// Allowed opcodes (pickle protocol ≤ 2, as torch.save writes it): PROTO STOP MARK, the constants
// NONE NEWTRUE NEWFALSE BININT BININT1 BININT2 LONG1 BINFLOAT BINUNICODE SHORT_BINSTRING, the
// containers EMPTY_DICT EMPTY_LIST EMPTY_TUPLE EMPTY_SET TUPLE TUPLE1 TUPLE2 TUPLE3 APPEND APPENDS
// SETITEM SETITEMS, the memo BINPUT LONG_BINPUT BINGET LONG_BINGET, and GLOBAL REDUCE BUILD NEWOBJ
// BINPERSID under the rules below. Every other opcode (INST, OBJ, STACK_GLOBAL, DUP, PERSID,
// protocol 4/5 framing, …) is refused with its name and byte offset.
//
// Allowed globals: collections.OrderedDict (REDUCE with no arguments → a dict; BUILD on it sets
// attributes such as `_metadata`, which are ignored), torch._utils._rebuild_tensor_v2 and
// _rebuild_tensor (REDUCE → a tensor over a storage), torch._utils._rebuild_parameter (REDUCE →
// its tensor), torch.nn.parameter.Parameter (NEWOBJ → its tensor), and the storage classes
// torch.{Float,Half,BFloat16,Double,Long,Int,Byte,Bool}Storage (only inside a persistent id).
// BINPERSID takes only ('storage', <storage class>, key, location, numel). Any other global, and
// REDUCE / NEWOBJ / BUILD on anything else, is refused with a FormatError naming it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "meshnn/core/tensor.h"

namespace meshnn::io::pickle {

// A tensor as torch.save describes it: a range of a storage (elements, not bytes).
struct TensorSpec {
  std::string storage_key;  // the archive's data/<key> entry
  DType dtype = DType::f32;
  uint64_t storage_numel = 0;
  uint64_t offset = 0;  // elements
  Shape shape;
  std::vector<int64_t> stride;  // elements, one per dimension
  uint64_t at = 0;              // byte offset in data.pkl (for errors)
};

// The state dict a pickle holds: name → tensor. `top` is the picked dict's key path: "" for a
// flat state dict, "generator" when the pickle is {'generator': {...}} (BigVGAN's
// bigvgan_generator.pt; other top-level keys beside it are ignored).
struct StateDict {
  std::map<std::string, TensorSpec> tensors;
  std::string top;
};

// Runs the pickle in [p, p + n). `where` names the file in errors ("X.pt: data.pkl").
// FormatError for a malformed or disallowed pickle, and for a result that is not a dict of
// tensors (a non-tensor value names its key).
// The pickle opcode's name ("REDUCE", "STACK_GLOBAL", …) for errors; "an unknown opcode" else.
const char* opcode_name(uint8_t op);

StateDict read_state_dict(const uint8_t* p, uint64_t n, const std::string& where);

}  // namespace meshnn::io::pickle
