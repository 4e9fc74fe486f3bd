// Everything a program needs from meshnn: tensors and errors, the .npy and WAV formats of model
// inputs and outputs, the mesh, every audio model (AudioModel, its streams) and every robot policy
// model (PolicyModel). This header and what it includes are the installed package (11 headers;
// the install_consumer test checks the set). Namespace: the public API is `meshnn`; everything
// under src/ is internal (docs/architecture.md).
#pragma once

#include "meshnn/audio_model.h"
#include "meshnn/core/error.h"
#include "meshnn/core/precision.h"
#include "meshnn/core/stage_precision.h"
#include "meshnn/core/tensor.h"
#include "meshnn/io/npy.h"
#include "meshnn/io/wav.h"
#include "meshnn/mesh/mesh.h"
#include "meshnn/policy_model.h"
