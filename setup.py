"""setuptools glue for pyproject.toml: builds the library and the `meshnn._meshnn` extension with
the project's CMake (Ninja when present), installs them into a staging prefix and copies the
extension and libmeshnn.so.0 into the package (the extension's RPATH includes $ORIGIN)."""
import glob
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = os.path.abspath(os.path.join(self.build_temp, 'cmake'))
        stage = os.path.abspath(os.path.join(self.build_temp, 'stage'))
        cfg = ['cmake', '-S', ROOT, '-B', build, '-DCMAKE_BUILD_TYPE=Release',
               '-DMESHNN_BUILD_PYTHON=ON', '-DMESHNN_BUILD_TESTS=OFF', '-DMESHNN_BUILD_BENCH=OFF',
               '-DMESHNN_BUILD_CLI=OFF', f'-DMESHNN_PYTHON_EXECUTABLE={sys.executable}',
               '-DMESHNN_PYTHON_INSTALL_DIR=pkg']
        if shutil.which('ninja'):
            cfg += ['-G', 'Ninja']
        subprocess.run(cfg, check=True)
        jobs = os.environ.get('CMAKE_BUILD_PARALLEL_LEVEL', str(os.cpu_count() or 1))
        subprocess.run(['cmake', '--build', build, '-j', jobs], check=True)
        shutil.rmtree(stage, ignore_errors=True)
        subprocess.run(['cmake', '--install', build, '--prefix', stage], check=True,
                       stdout=subprocess.DEVNULL)
        dest = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        (so,) = glob.glob(os.path.join(stage, 'pkg', 'meshnn', '_meshnn*.so'))
        shutil.copyfile(so, dest)
        libdir = os.path.dirname(os.path.realpath(glob.glob(os.path.join(stage, 'lib*', '**', 'libmeshnn.so.*'),
                                                            recursive=True)[0]))
        lib = [p for p in glob.glob(os.path.join(libdir, 'libmeshnn.so.*')) if not os.path.islink(p)][0]
        # The extension links libmeshnn.so.<major> (its SONAME).
        soname = 'libmeshnn.so.' + os.path.basename(lib).split('.so.')[1].split('.')[0]
        shutil.copyfile(lib, os.path.join(os.path.dirname(dest), soname))


# setuptools' own build folders go to build-pip/, away from the CMake build dir build/.
setup(ext_modules=[CMakeExtension('meshnn._meshnn')], cmdclass={'build_ext': CMakeBuild},
      options={'build': {'build_base': 'build-pip'}})
