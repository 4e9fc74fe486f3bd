# Installs the built project into a scratch prefix and builds examples/consumer against it with
# find_package(meshnn), then decodes a small random LTX-2.3 checkpoint with the consumer and with
# the installed CLI and checks the two WAV files are byte-identical, and that the installed `meshnn
# serve` runs the installed meshnn-serve. Invoked by CTest (install_consumer).
set(prefix "${BIN}/consumer-test/prefix")
set(cbuild "${BIN}/consumer-test/build")
file(REMOVE_RECURSE "${BIN}/consumer-test")
execute_process(COMMAND ${CMAKE_COMMAND} --install "${BIN}" --prefix "${prefix}" RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "install failed: ${rc}")
endif()
# The benchmarks are not part of the library: their CCL header is not installed; meshnn-bench is,
# beside meshnn, which runs it as `meshnn bench`.
if(EXISTS "${prefix}/include/meshnn/mesh/ccl_bench.h")
  message(FATAL_ERROR "include/meshnn/mesh/ccl_bench.h was installed (internal to bench/e2e)")
endif()
if(EXISTS "${prefix}/bin/meshnn-bench")
  execute_process(COMMAND "${prefix}/bin/meshnn" bench --help RESULT_VARIABLE rc OUTPUT_VARIABLE out)
  if(rc OR NOT out MATCHES "Usage: meshnn-bench")
    message(FATAL_ERROR "installed `meshnn bench --help` did not reach meshnn-bench (${rc}): ${out}")
  endif()
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S "${SRC}/examples/consumer" -B "${cbuild}" -G Ninja
                        -DCMAKE_PREFIX_PATH=${prefix} RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "consumer configure failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build "${cbuild}" RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "consumer build failed: ${rc}")
endif()
set(ckpt "${SRC}/tests/fixtures/ltx23_small.safetensors")
set(latent "${SRC}/tests/fixtures/ltx23_small_latent.npy")
execute_process(COMMAND "${cbuild}/consumer" "${ckpt}" "${latent}" "${BIN}/consumer-test/consumer.wav"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "consumer said: ${out}${err}")
if(rc)
  message(FATAL_ERROR "consumer run failed: ${rc}")
endif()
execute_process(COMMAND "${prefix}/bin/meshnn" audio-decode --checkpoint "${ckpt}" --latent "${latent}"
                        --out "${BIN}/consumer-test/cli.wav" --quiet RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "CLI audio-decode failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${BIN}/consumer-test/consumer.wav"
                        "${BIN}/consumer-test/cli.wav" RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "the consumer's WAV differs from the CLI's")
endif()
# The installed `meshnn serve` finds the installed meshnn-serve beside it (PATH emptied, so no other
# copy is found): its help lists the server's options.
if(EXISTS "${BIN}/meshnn-serve")
  execute_process(COMMAND ${CMAKE_COMMAND} -E env PATH= "${prefix}/bin/meshnn" serve --help
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc OR NOT out MATCHES "--drain-timeout")
    message(FATAL_ERROR "installed `meshnn serve --help` failed (${rc}): ${out}${err}")
  endif()
endif()
