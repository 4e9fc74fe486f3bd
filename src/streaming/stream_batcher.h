// Many independent streams of one model, their pushes run as one batch.
//
// Each member stream has its own graph (its own history, exactly as a single-device stream). A
// push waits up to a short window for the pushes of the batcher's other active members (those
// that have pushed since their last flush / reset); the pushes collected are then grouped: pushes
// with the same row shape from members whose saved histories (graph::StreamState) have equal
// normalised counters and tensor shapes are stacked along B — histories and rows — loaded into
// one member's graph, pushed once (every layer's filters read once for the whole group), and the
// output and the new history split back to each member. Other pushes (a stream's first push next
// to a running one, a different push size, a different phase) run alone on their own graph.
// Flushes are batched the same way (flushes of equal histories stack); a reset runs at once. Every
// batch is run by the batcher's one runner thread, started with the batcher and joined when it
// goes: its pushes are dealt to lanes, ⌈pushes / lanes⌉ each (a group cut where a lane fills),
// the lanes running side by side on one thread each (the runner's OpenMP team); pushes that fill
// one lane get all the batch's threads. The pushing threads sleep until their push is done and
// get its output or its error. The output of each member equals its stream run
// alone; it is bit-identical where the kernels' arithmetic per row does not depend on the batch
// (docs/streaming.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "streaming/stream_engine.h"

namespace meshnn::streaming {

struct BatcherOptions {
  double window_ms = 2.0;  // how long a push waits for the other active members' pushes
  // The batch's threads (0 = all cores), also its lanes: pushes that fill one lane run on all of
  // them (OpenMP); more are dealt to lanes of one thread each, side by side.
  int threads = 0;
};

class StreamBatcher {
 public:
  explicit StreamBatcher(const BatcherOptions& options = {});
  ~StreamBatcher();
  StreamBatcher(const StreamBatcher&) = delete;
  StreamBatcher& operator=(const StreamBatcher&) = delete;

  // A member stream over `graph` (a single-device engine whose pushes are batched). Pushes batch
  // only with members of an equal `key` (the same weights and graph). The engine may outlive the
  // batcher.
  std::unique_ptr<StreamEngine> join(NodePtr graph, std::string key);

  struct Stats {
    int64_t batches = 0;           // batched pushes run (each of ≥ 2 streams)
    int64_t batched_pushes = 0;    // member pushes that ran inside one
    int64_t solo_pushes = 0;       // member pushes that ran alone
    int64_t push_threads = 0;      // threads that led batches (1: the runner)
    int64_t parallel_batches = 0;  // batches whose groups ran side by side on the lanes
    int64_t stacked_flushes = 0;   // flushes that ran stacked with others
  };
  Stats stats() const;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace meshnn::streaming
