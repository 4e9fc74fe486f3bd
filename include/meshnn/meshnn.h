// Everything a program needs from meshnn: tensors and errors, file formats, the mesh, the audio
// models and the GR00T adapter. Namespaces: the public API is `meshnn` (GR00T in `meshnn::gr00t`);
// everything under src/ is internal (docs/architecture.md).
#pragma once

#include "meshnn/audio.h"
#include "meshnn/core/error.h"
#include "meshnn/core/precision.h"
#include "meshnn/core/stage_precision.h"
#include "meshnn/core/tensor.h"
#include "meshnn/io/npy.h"
#include "meshnn/io/safetensors.h"
#include "meshnn/io/stream_io.h"
#include "meshnn/io/wav.h"
#include "meshnn/mesh/mesh.h"
#include "meshnn/models/gr00t_adapter.h"
#include "meshnn/streaming.h"
