// meshnn::AudioIoSpec's printed layout. Its own file: serve's body parser (and its fuzz target,
// which links only the core and io) needs it without the model registry.
#include <sstream>

#include "meshnn/audio_model.h"

namespace meshnn {

std::string AudioIoSpec::layout() const {
  std::ostringstream s;
  s << '(';
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s << ", ";
    if (static_cast<int>(i) == time_axis)
      s << 'T';
    else if (shape[i] < 0)
      s << 'B';
    else
      s << shape[i];
  }
  s << ')';
  return s.str();
}

}  // namespace meshnn
