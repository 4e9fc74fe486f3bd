// Everything a program needs from meshnn: tensors and errors, the .npy and WAV formats of model
// inputs and outputs, the mesh, every audio model (AudioModel, its streams) and GR00T (adapter,
// policy). This header and what it includes are the installed package (12 headers; the
// install_consumer test checks the set). Namespaces: the public API is `meshnn` (GR00T in
// `meshnn::gr00t`); everything under src/ is internal (docs/architecture.md).
#pragma once

#include "meshnn/audio_model.h"
#include "meshnn/core/error.h"
#include "meshnn/core/precision.h"
#include "meshnn/core/stage_precision.h"
#include "meshnn/core/tensor.h"
#include "meshnn/gr00t.h"
#include "meshnn/io/npy.h"
#include "meshnn/io/wav.h"
#include "meshnn/mesh/mesh.h"
