// The machine behind pickle::read_state_dict (torch_pickle.h): its objects and its state. Only
// torch_pickle.cc includes this.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "io/file_util.h"
#include "io/torch_pickle.h"

namespace meshnn::io::pickle::vm {

// A pickle holds a few objects per tensor; a million objects is a state dict of ~60k tensors.
// The cap bounds the memory a hostile pickle can make us spend (every opcode makes at most one).
constexpr size_t kMaxObjects = 1u << 20;

enum class Kind : uint8_t {
  none,
  boolean,
  integer,
  real,
  string,
  list,
  tuple,
  dict,
  set,
  global,
  storage,
  tensor
};
inline const char* kind_name(Kind k) {
  static const char* const names[] = {"None",  "bool", "int", "float",  "str",     "list",
                                      "tuple", "dict", "set", "global", "storage", "tensor"};
  return names[static_cast<int>(k)];
}

// What an allowed global stands for (never a Python object: a tag REDUCE / NEWOBJ act on).
enum class Global : uint8_t {
  ordered_dict,
  rebuild_tensor_v2,
  rebuild_tensor,
  rebuild_parameter,
  parameter,
  storage_type
};

struct Obj {
  Kind kind = Kind::none;
  Global global = Global::ordered_dict;
  bool ordered = false;  // a dict made by OrderedDict() (the only dict BUILD may act on)
  int64_t i = 0;         // bool / int
  double f = 0;
  DType dtype = DType::f32;              // storage class / storage
  std::string s;                         // str; a storage's key
  uint64_t numel = 0;                    // storage
  std::vector<uint32_t> items;           // list / tuple
  std::map<std::string, uint32_t> dict;  // dict (string keys only)
  TensorSpec tensor;
};

// Objects by kind (no designated initializers: -Wmissing-field-initializers).
inline Obj of(Kind k) {
  Obj o;
  o.kind = k;
  return o;
}
inline Obj integer(Kind k, int64_t v) {
  Obj o = of(k);
  o.i = v;
  return o;
}
inline Obj with_items(Kind k, std::vector<uint32_t> items) {
  Obj o = of(k);
  o.items = std::move(items);
  return o;
}

struct StorageClass {
  const char* name;
  DType dtype;
};
constexpr StorageClass kStorageClasses[] = {
    {"FloatStorage", DType::f32},  {"HalfStorage", DType::f16},    {"BFloat16Storage", DType::bf16},
    {"DoubleStorage", DType::f64}, {"LongStorage", DType::i64},    {"IntStorage", DType::i32},
    {"ByteStorage", DType::u8},    {"BoolStorage", DType::boolean}};

class Vm {
 public:
  Vm(const uint8_t* p, uint64_t n, std::string where) : p_(p), n_(n), where_(std::move(where)) {}
  uint32_t run();  // → the pickled object
  const Obj& obj(uint32_t v) const { return objs_[v]; }
  [[noreturn]] void fail(uint64_t at, const std::string& msg) const {
    format_fail(where_, at, msg);
  }

 private:
  bool step(uint8_t op);  // false on STOP
  void scalars(uint8_t op);
  void containers(uint8_t op);
  void global();
  void reduce();
  void newobj();
  void build();
  void persistent_id();
  uint32_t rebuild_tensor(const Obj& args, bool v2);

  const uint8_t* take(uint64_t k) {
    if (n_ - pos_ < k) fail(pos_, detail::concat("truncated: ", op_name(), " needs ", k, " bytes"));
    const uint8_t* q = p_ + pos_;
    pos_ += k;
    return q;
  }
  uint64_t uint_le(int k) {
    const uint8_t* q = take(k);
    uint64_t v = 0;
    for (int i = k - 1; i >= 0; --i) v = (v << 8) | q[i];
    return v;
  }
  std::string line();  // GLOBAL's module / name: text up to '\n'
  std::string op_name() const {
    return detail::concat(opcode_name(p_[op_at_]), " at byte ", op_at_);
  }
  [[noreturn]] void refuse(const std::string& what) const { fail(op_at_, what); }

  uint32_t make(Obj o) {
    if (objs_.size() >= kMaxObjects)
      refuse(detail::concat("more than ", kMaxObjects, " objects: not a state dict"));
    objs_.push_back(std::move(o));
    return static_cast<uint32_t>(objs_.size() - 1);
  }
  void push(Obj o) { stack_.push_back(make(std::move(o))); }
  size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
  uint32_t pop() {
    if (stack_.size() <= floor()) refuse(detail::concat(op_name(), " on an empty stack"));
    const uint32_t v = stack_.back();
    stack_.pop_back();
    return v;
  }
  uint32_t top() {
    if (stack_.size() <= floor()) refuse(detail::concat(op_name(), " on an empty stack"));
    return stack_.back();
  }
  std::vector<uint32_t> pop_mark() {
    if (marks_.empty()) refuse(detail::concat(op_name(), " without a MARK"));
    std::vector<uint32_t> items(stack_.begin() + static_cast<ptrdiff_t>(marks_.back()),
                                stack_.end());
    stack_.resize(marks_.back());
    marks_.pop_back();
    return items;
  }
  Obj& expect(uint32_t v, Kind k, const char* what) {
    if (objs_[v].kind != k)
      refuse(detail::concat(op_name(), ": ", what, " is a ", kind_name(objs_[v].kind), ", not a ",
                            kind_name(k)));
    return objs_[v];
  }
  void set_item(uint32_t dict, uint32_t key, uint32_t value) {
    Obj& d = expect(dict, Kind::dict, "the target");
    const Obj& k = objs_[key];
    if (k.kind != Kind::string)
      refuse(detail::concat(op_name(), ": a dict key of type ", kind_name(k.kind),
                            " (a state dict's keys are strings)"));
    d.dict[k.s] = value;
  }

  const uint8_t* p_;
  uint64_t n_, pos_ = 0, op_at_ = 0;
  std::string where_;
  std::vector<Obj> objs_;
  std::vector<uint32_t> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint32_t, uint32_t> memo_;
};

}  // namespace meshnn::io::pickle::vm
