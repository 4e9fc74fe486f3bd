// Weights loaded once, runners made on demand: a pool of per-thread copies of one model.
//
// `Model` is an internal model class whose copy constructor shares every weight (packed once per
// process) and gives the copy its own plans and scratch (see layers/conv.h), or a class whose
// fork() does the same (the GR00T runners, whose K/V buffers a copy must not share). The pool keeps
// the loaded model as the immutable weights, never runs it, and hands each caller thread a runner:
// an idle one when there is one (warm: its plans are built), else a fresh copy. The lock is taken
// only to take or return a runner, never during a forward.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

namespace meshnn::api {

template <class Model>
class RunnerPool {
 public:
  explicit RunnerPool(std::unique_ptr<const Model> weights) : weights_(std::move(weights)) {}

  const Model& weights() const { return *weights_; }

  // A runner owned by one thread until the lease ends.
  class Lease {
   public:
    Lease(RunnerPool* pool, std::unique_ptr<Model> m) : pool_(pool), model_(std::move(m)) {}
    Lease(Lease&&) noexcept = default;
    ~Lease() {
      if (model_) pool_->put(std::move(model_));
    }
    Model& operator*() { return *model_; }
    Model* operator->() { return model_.get(); }

   private:
    RunnerPool* pool_;
    std::unique_ptr<Model> model_;
  };

  Lease take() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!idle_.empty()) {
        std::unique_ptr<Model> m = std::move(idle_.back());
        idle_.pop_back();
        return Lease(this, std::move(m));
      }
    }
    if constexpr (requires(const Model& m) { m.fork(); })
      return Lease(this, weights_->fork());
    else
      return Lease(this, std::make_unique<Model>(*weights_));
  }

 private:
  void put(std::unique_ptr<Model> m) {
    std::lock_guard<std::mutex> lock(mu_);
    idle_.push_back(std::move(m));
  }

  std::unique_ptr<const Model> weights_;
  std::mutex mu_;
  std::vector<std::unique_ptr<Model>> idle_;
};

}  // namespace meshnn::api
