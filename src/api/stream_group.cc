// StreamGroup (meshnn/audio_model.h): the public handle on a stream batcher.
#include "api/stream_group.h"

#include "meshnn/core/error.h"

namespace meshnn {

std::unique_ptr<streaming::StreamEngine> StreamGroup::Impl::join(graph::NodePtr graph,
                                                                 const std::string& k) {
  MESHNN_CHECK_AS(InvalidArgument, !k.empty(), "this model's stream cannot join a stream group");
  {
    const std::lock_guard<std::mutex> lock(mu);
    if (key.empty()) key = k;
    MESHNN_CHECK_AS(InvalidArgument, key == k,
                    "a stream group batches the streams of one model and stage: this stream's ", k,
                    " is not the group's ", key);
  }
  return batcher.join(std::move(graph), k);
}

StreamGroup::StreamGroup(double window_ms, int threads)
    : impl_(std::make_unique<Impl>(streaming::BatcherOptions{window_ms, threads})) {}
StreamGroup::~StreamGroup() = default;
int64_t StreamGroup::batches() const { return impl_->batcher.stats().batches; }
int64_t StreamGroup::batched_pushes() const { return impl_->batcher.stats().batched_pushes; }
int64_t StreamGroup::solo_pushes() const { return impl_->batcher.stats().solo_pushes; }

}  // namespace meshnn
