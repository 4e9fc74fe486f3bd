// Output paths: how every meshnn writer (wav, npy, safetensors) replaces what `path` names, and
// the checks a command makes on its output path before any expensive work.
//
// Writing (write_output in src/io/file_util.h, used by write_wav / save_npy / save_safetensors):
//   - symlinks are followed: the link's final target is written, the link itself stays;
//   - a regular file (or a new one) is written to a temporary file in the target's folder and
//     renamed over it (atomic: readers see the old or the new file, never half of one); an
//     existing file keeps its permission bits and owner. When the owner cannot be kept (not root,
//     file owned by someone else), the file is rewritten in place instead, which keeps both;
//   - anything else (FIFO, character device, socket-like targets) is opened and written directly,
//     streamed, never renamed over: `--out /dev/null` and `--out some.fifo` behave as with `cat >`.
#pragma once

#include <string>
#include <vector>

namespace meshnn::io {

// The path writes to `path` end on: symlinks followed (also dangling ones, up to 40 hops),
// relative results made absolute. The file itself need not exist.
std::string resolve_output_path(const std::string& path);

// Checks, before any work, that `out` can be written and is none of `inputs`:
//   - InvalidArgument when `out` resolves to the same file as an input (same device and inode
//     after following symlinks; hard links included): writing would destroy the input;
//   - InvalidArgument when `out` is a folder, its folder does not exist, or cannot be written.
// Empty strings in `inputs` are skipped. `option` names the flag in the message ("--out").
void check_output_path(const std::string& out, const std::vector<std::string>& inputs,
                       const std::string& option = "--out");

// A writer's temporary file is removed when the process dies of SIGINT, SIGTERM or SIGHUP (a
// killed write must not leave a half-written scratch file beside its target). This installs the
// handler for those signals where none is installed (the CLI calls it; an embedding program, e.g.
// Python, keeps its own handlers). The handler removes the temporary files of the writes in
// progress, then re-raises the signal with the default action.
void remove_temp_files_on_signal();

}  // namespace meshnn::io
