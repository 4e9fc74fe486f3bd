# Installs the built project into a scratch prefix and imports the installed Python package from
# there with the interpreter it was built for (checks the install layout and the extension's
# RPATH to <prefix>/lib). Invoked by CTest (python_install).
set(prefix "${BIN}/python-install-test/prefix")
file(REMOVE_RECURSE "${BIN}/python-install-test")
execute_process(COMMAND ${CMAKE_COMMAND} --install "${BIN}" --prefix "${prefix}" RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "install failed: ${rc}")
endif()
set(code "import meshnn, numpy as np, sys
assert meshnn.__file__.startswith(sys.argv[1]), meshnn.__file__
v = meshnn.BigVGAN.from_pretrained(sys.argv[2])
y = v(np.ones((1, v.num_mels, 4), np.float32))
assert y.shape == (1, 1, 4 * v.hop_length)
print('installed meshnn', meshnn.__version__, 'from', meshnn.__file__)")
execute_process(COMMAND ${CMAKE_COMMAND} -E env "PYTHONPATH=${prefix}/${PYDIR}" --unset=LD_LIBRARY_PATH
                        ${PYTHON} -c "${code}" "${prefix}" "${SRC}/tests/fixtures/bigvgan_v2_24k_small.safetensors"
                WORKING_DIRECTORY "${BIN}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "${out}${err}")
if(rc)
  message(FATAL_ERROR "import of the installed package failed: ${rc}")
endif()
