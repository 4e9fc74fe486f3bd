// The one pool of the runtime: objects a call mutates (a model's runners, a graph's nodes) made on
// demand and reused, so the second call is warm (plans built, weights packed) and concurrent
// calls never share one.
//
// take() hands out an idle object when there is one, else a fresh one from `make`; the lease gives
// it back when it ends, after the optional `reset` hook (e.g. graph::Node::reset(): no history of
// one call survives into the next). The lock is taken only to take or return an object, never
// while one runs or is made.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace meshnn::runtime {

template <class T>
class Pool {
 public:
  using Make = std::function<std::unique_ptr<T>()>;
  using Reset = std::function<void(T&)>;

  explicit Pool(Make make, Reset reset = {}) : make_(std::move(make)), reset_(std::move(reset)) {}
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  // An object owned by one thread until the lease ends.
  class Lease {
   public:
    Lease(Pool* pool, std::unique_ptr<T> obj) : pool_(pool), obj_(std::move(obj)) {}
    Lease(Lease&&) noexcept = default;
    ~Lease() {
      if (obj_) pool_->put(std::move(obj_));
    }
    T& operator*() { return *obj_; }
    T* operator->() { return obj_.get(); }

   private:
    Pool* pool_;
    std::unique_ptr<T> obj_;
  };

  Lease take() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!idle_.empty()) {
        std::unique_ptr<T> obj = std::move(idle_.back());
        idle_.pop_back();
        return Lease(this, std::move(obj));
      }
    }
    return Lease(this, make_());
  }

 private:
  void put(std::unique_ptr<T> obj) {
    if (reset_) reset_(*obj);
    std::lock_guard<std::mutex> lock(mu_);
    idle_.push_back(std::move(obj));
  }

  Make make_;
  Reset reset_;
  std::mutex mu_;
  std::vector<std::unique_ptr<T>> idle_;
};

// A runner over loaded weights that a pool hands out: the weights' fork() when they have one (a
// copy must not share some buffers, e.g. persistent K/V), else a copy (copying a layer shares its
// weights and starts with no plans, see layers/conv.h).
template <class Model>
std::unique_ptr<Model> runner_of(const Model& weights) {
  if constexpr (requires { weights.fork(); })
    return weights.fork();
  else
    return std::make_unique<Model>(weights);
}

}  // namespace meshnn::runtime
