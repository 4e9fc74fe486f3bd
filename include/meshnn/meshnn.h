// Everything a program needs from meshnn: tensors and errors, file formats, the mesh, the audio
// models and GR00T (adapter, policy). Namespaces: the public API is `meshnn` (GR00T in
// `meshnn::gr00t`); everything under src/ is internal (docs/architecture.md).
#pragma once

#include "meshnn/audio.h"
#include "meshnn/audio_model.h"
#include "meshnn/core/error.h"
#include "meshnn/core/precision.h"
#include "meshnn/core/stage_precision.h"
#include "meshnn/core/tensor.h"
#include "meshnn/gr00t.h"
#include "meshnn/io/npy.h"
#include "meshnn/io/safetensors.h"
#include "meshnn/io/stream_io.h"
#include "meshnn/io/wav.h"
#include "meshnn/mesh/mesh.h"
#include "meshnn/streaming.h"
