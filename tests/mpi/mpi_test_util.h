// Helpers of the MPI test binary (defined in ccl_mpi_test_main.cc).
#pragma once

namespace meshnn::test {

// Logical AND of `ok` over MPI_COMM_WORLD, so every rank agrees on pass / fail.
bool mpi_all_true(bool ok);

}  // namespace meshnn::test
