// StreamGroup's implementation (meshnn/audio_model.h): a streaming::StreamBatcher bound to the
// first stream's model and graph.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "meshnn/audio_model.h"
#include "streaming/stream_batcher.h"

namespace meshnn {

struct StreamGroup::Impl {
  explicit Impl(const streaming::BatcherOptions& o) : batcher(o) {}
  // graph: a new stream's graph; key: its model's and graph's identity (api::StreamSpec) → its
  // engine, batched with the group's. InvalidArgument when the key is empty (the model's stream
  // cannot be batched) or differs from the group's.
  std::unique_ptr<streaming::StreamEngine> join(graph::NodePtr graph, const std::string& key);

  streaming::StreamBatcher batcher;
  std::mutex mu;
  std::string key;  // the first stream's
};

}  // namespace meshnn
