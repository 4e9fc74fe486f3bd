#include "io/torch_pickle.h"

#include <cstring>

#include "io/pickle_vm.h"

namespace meshnn::io::pickle {

namespace vm {

std::string Vm::line() {
  const void* nl = std::memchr(p_ + pos_, '\n', n_ - pos_);
  if (!nl) refuse(detail::concat("truncated: ", op_name(), " without its newline"));
  const uint64_t end = static_cast<const uint8_t*>(nl) - p_;
  std::string s(reinterpret_cast<const char*>(p_ + pos_), end - pos_);
  pos_ = end + 1;
  return s;
}

uint32_t Vm::run() {
  while (true) {
    if (pos_ >= n_) fail(pos_, "truncated: the pickle ends without STOP");
    op_at_ = pos_;
    if (!step(p_[pos_++])) break;
  }
  return pop();
}

bool Vm::step(uint8_t op) {
  switch (op) {
    case 0x80: {  // PROTO
      const uint64_t v = uint_le(1);
      if (v < 2 || v > 5) refuse(detail::concat("pickle protocol ", v, " (torch.save writes 2)"));
      return true;
    }
    case '.':
      return false;
    case '(':
      marks_.push_back(stack_.size());
      return true;
    case 'q':
    case 'r': {  // BINPUT / LONG_BINPUT
      const auto idx = static_cast<uint32_t>(uint_le(op == 'q' ? 1 : 4));
      memo_[idx] = top();
      return true;
    }
    case 'h':
    case 'j': {  // BINGET / LONG_BINGET
      const auto idx = static_cast<uint32_t>(uint_le(op == 'h' ? 1 : 4));
      const auto it = memo_.find(idx);
      if (it == memo_.end()) refuse(detail::concat(op_name(), ": memo ", idx, " was never set"));
      stack_.push_back(it->second);
      return true;
    }
    case 'c':
      global();
      return true;
    case 'R':
      reduce();
      return true;
    case 0x81:
      newobj();
      return true;
    case 'b':
      build();
      return true;
    case 'Q':
      persistent_id();
      return true;
    default:
      scalars(op);
      return true;
  }
}

// The constants: None, bools, ints, floats, strings (anything else: containers()).
void Vm::scalars(uint8_t op) {
  switch (op) {
    case 'N':
      push(of(Kind::none));
      return;
    case 0x88:
    case 0x89:
      push(integer(Kind::boolean, op == 0x88));
      return;
    case 'K':
      push(integer(Kind::integer, static_cast<int64_t>(uint_le(1))));
      return;
    case 'M':
      push(integer(Kind::integer, static_cast<int64_t>(uint_le(2))));
      return;
    case 'J': {
      const auto v = static_cast<int32_t>(static_cast<uint32_t>(uint_le(4)));
      push(integer(Kind::integer, v));
      return;
    }
    case 0x8a: {  // LONG1: n bytes, little-endian two's complement
      const uint64_t k = uint_le(1);
      if (k > 8) refuse(detail::concat(op_name(), ": a ", k, "-byte integer is out of range"));
      uint64_t v = k ? uint_le(static_cast<int>(k)) : 0;
      if (k > 0 && k < 8 && (v >> (8 * k - 1)) & 1) v |= ~uint64_t{0} << (8 * k);  // sign-extend
      push(integer(Kind::integer, static_cast<int64_t>(v)));
      return;
    }
    case 'G': {  // BINFLOAT: big-endian IEEE double
      const uint8_t* q = take(8);
      uint64_t bits = 0;
      for (int i = 0; i < 8; ++i) bits = (bits << 8) | q[i];
      double d;
      std::memcpy(&d, &bits, 8);
      Obj o = of(Kind::real);
      o.f = d;
      push(std::move(o));
      return;
    }
    case 'X':
    case 'U': {  // BINUNICODE (u32 length) / SHORT_BINSTRING (u8 length)
      const uint64_t len = uint_le(op == 'X' ? 4 : 1);
      const uint8_t* q = take(len);
      Obj o = of(Kind::string);
      o.s.assign(reinterpret_cast<const char*>(q), len);
      push(std::move(o));
      return;
    }
    default:
      containers(op);
  }
}

void Vm::containers(uint8_t op) {
  switch (op) {
    case '}':
      push(of(Kind::dict));
      return;
    case ']':
      push(of(Kind::list));
      return;
    case ')':
      push(of(Kind::tuple));
      return;
    case 0x8f:
      push(of(Kind::set));
      return;  // EMPTY_SET (nothing can be added to it)
    case 't':
      push(with_items(Kind::tuple, pop_mark()));
      return;
    case 0x85:
    case 0x86:
    case 0x87: {  // TUPLE1..3
      std::vector<uint32_t> items(op - 0x84);
      for (size_t k = items.size(); k-- > 0;) items[k] = pop();
      push(with_items(Kind::tuple, std::move(items)));
      return;
    }
    case 'a': {
      const uint32_t item = pop();
      expect(top(), Kind::list, "the target").items.push_back(item);
      return;
    }
    case 'e': {
      const std::vector<uint32_t> items = pop_mark();
      auto& list = expect(top(), Kind::list, "the target").items;
      list.insert(list.end(), items.begin(), items.end());
      return;
    }
    case 's': {
      const uint32_t value = pop(), key = pop();
      set_item(top(), key, value);
      return;
    }
    case 'u': {
      const std::vector<uint32_t> items = pop_mark();
      if (items.size() % 2) refuse(detail::concat(op_name(), ": an odd number of items"));
      const uint32_t dict = top();
      for (size_t k = 0; k < items.size(); k += 2) set_item(dict, items[k], items[k + 1]);
      return;
    }
    default:
      refuse(detail::concat("opcode ", opcode_name(op), " (0x", std::hex, int{op}, std::dec,
                            ") at byte ", op_at_,
                            " is not allowed in a weights-only checkpoint (a state dict of "
                            "tensors never needs it)"));
  }
}

void Vm::global() {
  const std::string module = line(), name = line();
  const std::string full = module + "." + name;
  Obj g = of(Kind::global);
  if (full == "collections.OrderedDict") {
    g.global = Global::ordered_dict;
  } else if (full == "torch._utils._rebuild_tensor_v2") {
    g.global = Global::rebuild_tensor_v2;
  } else if (full == "torch._utils._rebuild_tensor") {
    g.global = Global::rebuild_tensor;
  } else if (full == "torch._utils._rebuild_parameter") {
    g.global = Global::rebuild_parameter;
  } else if (full == "torch.nn.parameter.Parameter") {
    g.global = Global::parameter;
  } else {
    bool storage = false;
    for (const StorageClass& c : kStorageClasses)
      if (module == "torch" && name == c.name) {
        g.global = Global::storage_type;
        g.dtype = c.dtype;
        storage = true;
      }
    if (!storage)
      refuse(detail::concat("GLOBAL '", full, "' at byte ", op_at_,
                            " is not allowed: a weights-only checkpoint may name only "
                            "collections.OrderedDict, torch._utils._rebuild_tensor_v2 / "
                            "_rebuild_tensor / _rebuild_parameter, torch.nn.parameter.Parameter "
                            "and the torch.*Storage classes of float, half, bfloat16, double, "
                            "long, int, byte and bool tensors"));
  }
  push(std::move(g));
}

// REDUCE: callable args → callable(*args), for the allowed callables only.
void Vm::reduce() {
  const uint32_t args = pop();
  const uint32_t fn = pop();
  const Obj& f = objs_[fn];
  const Obj& a = expect(args, Kind::tuple, "REDUCE's argument");
  if (f.kind != Kind::global || f.global == Global::parameter || f.global == Global::storage_type)
    refuse(detail::concat("REDUCE at byte ", op_at_, " calls a ", kind_name(f.kind),
                          f.kind == Kind::global ? " that is not a rebuild function" : "",
                          ": only OrderedDict() and torch's tensor rebuild functions may be "
                          "called in a weights-only checkpoint"));
  if (f.global == Global::ordered_dict) {
    if (!a.items.empty()) refuse("REDUCE: OrderedDict takes no arguments here");
    Obj d = of(Kind::dict);
    d.ordered = true;
    push(std::move(d));
  } else if (f.global == Global::rebuild_parameter) {
    // (data, requires_grad, backward_hooks) → data
    if (a.items.size() != 3) refuse("REDUCE: _rebuild_parameter takes 3 arguments");
    const uint32_t t = a.items[0];
    expect(t, Kind::tensor, "_rebuild_parameter's data");
    stack_.push_back(t);
  } else {
    const Obj args_copy = a;  // rebuild_tensor grows objs_ (references into it would dangle)
    stack_.push_back(rebuild_tensor(args_copy, f.global == Global::rebuild_tensor_v2));
  }
}

// NEWOBJ: cls args → cls(*args), for torch.nn.Parameter(data[, requires_grad]) only.
void Vm::newobj() {
  const uint32_t args = pop();
  const uint32_t cls = pop();
  const Obj& c = objs_[cls];
  if (c.kind != Kind::global || c.global != Global::parameter)
    refuse(detail::concat("NEWOBJ at byte ", op_at_,
                          " instantiates a class other than torch.nn.Parameter"));
  const Obj& a = expect(args, Kind::tuple, "NEWOBJ's argument");
  if (a.items.empty() || a.items.size() > 2) refuse("NEWOBJ: Parameter takes 1 or 2 arguments");
  const uint32_t t = a.items[0];
  expect(t, Kind::tensor, "Parameter's data");
  stack_.push_back(t);
}

// BUILD: obj state → obj with its attributes set; only on an OrderedDict (whose attributes,
// e.g. a state dict's `_metadata` versions, say nothing about the tensors and are dropped).
void Vm::build() {
  const uint32_t state = pop();
  const Obj& target = objs_[top()];
  if (target.kind != Kind::dict || !target.ordered)
    refuse(detail::concat("BUILD at byte ", op_at_, " on a ", kind_name(target.kind),
                          ": only an OrderedDict's attributes may be set"));
  expect(state, Kind::dict, "BUILD's state");
}

// BINPERSID: ('storage', <storage class>, key, location, numel) → a storage.
void Vm::persistent_id() {
  const uint32_t pid = pop();
  const Obj& t = objs_[pid];
  if (t.kind != Kind::tuple || t.items.size() != 5 || objs_[t.items[0]].kind != Kind::string ||
      objs_[t.items[0]].s != "storage")
    refuse(detail::concat("BINPERSID at byte ", op_at_,
                          ": only ('storage', type, key, location, numel) ids are allowed"));
  const Obj& type = objs_[t.items[1]];
  const Obj& key = objs_[t.items[2]];
  const Obj& numel = objs_[t.items[4]];
  if (type.kind != Kind::global || type.global != Global::storage_type)
    refuse("BINPERSID: the storage type is not a torch.*Storage class");
  if (key.kind != Kind::string || objs_[t.items[3]].kind != Kind::string)
    refuse("BINPERSID: the storage key and location must be strings");
  if (numel.kind != Kind::integer || numel.i < 0)
    refuse("BINPERSID: the storage size must be a non-negative int");
  Obj st = of(Kind::storage);
  st.dtype = type.dtype;
  st.s = key.s;
  st.numel = static_cast<uint64_t>(numel.i);
  push(std::move(st));
}

// args: (storage, offset, size, stride[, requires_grad, backward_hooks[, metadata]]) → a tensor
// whose every element lies inside the storage.
uint32_t Vm::rebuild_tensor(const Obj& a, bool v2) {
  const size_t n = a.items.size();
  if (v2 ? (n != 6 && n != 7) : n != 4)
    refuse(detail::concat("REDUCE: ",
                          v2 ? "_rebuild_tensor_v2 takes 6 or 7"
                             : "_rebuild_tensor "
                               "takes 4",
                          " arguments, got ", n));
  const Obj& st = expect(a.items[0], Kind::storage, "the tensor's storage");
  const Obj& off = expect(a.items[1], Kind::integer, "the storage offset");
  const Obj& size = expect(a.items[2], Kind::tuple, "the size");
  const Obj& stride = expect(a.items[3], Kind::tuple, "the stride");
  if (v2) {
    expect(a.items[4], Kind::boolean, "requires_grad");
    if (!expect(a.items[5], Kind::dict, "backward_hooks").dict.empty())
      refuse("REDUCE: a tensor with backward hooks");
  }
  if (off.i < 0) refuse("REDUCE: a negative storage offset");
  if (size.items.size() > static_cast<size_t>(kMaxRank) || stride.items.size() != size.items.size())
    refuse(detail::concat("REDUCE: size of rank ", size.items.size(), " and stride of rank ",
                          stride.items.size(), " (at most ", kMaxRank, ", equal)"));
  TensorSpec spec{st.s, st.dtype, st.numel, static_cast<uint64_t>(off.i), {}, {}, op_at_};
  uint64_t last = spec.offset, numel = 1;
  bool empty = false;
  for (size_t d = 0; d < size.items.size(); ++d) {
    const Obj& sz = expect(size.items[d], Kind::integer, "a size entry");
    const Obj& sd = expect(stride.items[d], Kind::integer, "a stride entry");
    if (sz.i < 0 || sd.i < 0) refuse("REDUCE: a negative size or stride");
    spec.shape.push_back(sz.i);
    spec.stride.push_back(sd.i);
    uint64_t reach = 0;
    if (sz.i == 0) empty = true;
    if (__builtin_mul_overflow(numel, static_cast<uint64_t>(sz.i), &numel) ||
        (sz.i > 0 && (__builtin_mul_overflow(static_cast<uint64_t>(sz.i - 1),
                                             static_cast<uint64_t>(sd.i), &reach) ||
                      __builtin_add_overflow(last, reach, &last))))
      refuse("REDUCE: the tensor's size or stride overflows");
  }
  if (empty ? spec.offset > st.numel : last >= st.numel)
    refuse(detail::concat("REDUCE: the tensor (offset ", spec.offset, ", size ",
                          shape_str(spec.shape), ") reaches past its storage of ", st.numel,
                          " elements"));
  // A broadcast view (stride 0) bigger than its storage would be copied out to its full size:
  // refused, so that a few bytes of pickle cannot ask for gigabytes.
  if (numel > st.numel) refuse("REDUCE: a tensor with more elements than its storage");
  Obj t = of(Kind::tensor);
  t.tensor = std::move(spec);
  return make(std::move(t));
}

}  // namespace vm

StateDict read_state_dict(const uint8_t* p, uint64_t n, const std::string& where) {
  using namespace vm;
  Vm vm(p, n, where);
  const Obj& top = vm.obj(vm.run());
  if (top.kind != Kind::dict)
    vm.fail(0, detail::concat("the checkpoint holds a ", kind_name(top.kind),
                              ", not a state dict (a dict of tensors)"));
  StateDict out;
  const Obj* sd = &top;
  if (const auto g = top.dict.find("generator");
      g != top.dict.end() && vm.obj(g->second).kind == Kind::dict) {
    sd = &vm.obj(g->second);
    out.top = "generator";
  }
  for (const auto& [key, v] : sd->dict) {
    const Obj& o = vm.obj(v);
    if (o.kind != Kind::tensor)
      vm.fail(0, detail::concat(out.top.empty() ? "" : "generator: ", "'", key, "' is a ",
                                kind_name(o.kind), ", not a tensor"));
    out.tensors.emplace(key, o.tensor);
  }
  return out;
}

}  // namespace meshnn::io::pickle
