"""Build hook: generates the ridgeline.v1 stubs from every
proto/ridgeline/v1/*.proto into the build tree (never into the source tree),
so the package always matches the protos it is built from.

protoc: grpc_tools.protoc when importable (its protoc matches a PyPI
protobuf), else the system protoc + grpc_python_plugin (Debian
protobuf-compiler, protobuf-compiler-grpc). Overrides: RIDGELINE_PROTO_DIR
(the folder holding ridgeline/v1/*.proto), PROTOC, GRPC_PYTHON_PLUGIN."""

import glob
import os
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


def proto_root():
    root = os.environ.get("RIDGELINE_PROTO_DIR") or os.path.join(
        HERE, "..", "..", "proto")
    root = os.path.abspath(root)
    if not glob.glob(os.path.join(root, "ridgeline", "v1", "*.proto")):
        sys.exit("ridgeline: no ridgeline/v1/*.proto under %s; set "
                 "RIDGELINE_PROTO_DIR to the repository's proto/ folder" % root)
    return root


def protoc_command():
    """The protoc invocation prefix (with the gRPC Python plugin)."""
    if not os.environ.get("PROTOC"):
        try:
            import grpc_tools  # noqa: F401  (PyPI grpcio-tools)
            # Its bundled well-known types (google/protobuf/*.proto).
            wkt = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
            return [sys.executable, "-m", "grpc_tools.protoc", "-I", wkt]
        except ImportError:
            pass
    protoc = os.environ.get("PROTOC") or shutil.which("protoc")
    plugin = os.environ.get("GRPC_PYTHON_PLUGIN") or shutil.which(
        "grpc_python_plugin")
    if not protoc or not plugin:
        sys.exit("ridgeline: need protoc and grpc_python_plugin (Debian "
                 "protobuf-compiler, protobuf-compiler-grpc) or grpcio-tools")
    return [protoc, "--plugin=protoc-gen-grpc_python=" + plugin]


class BuildWithStubs(build_py):
    def run(self):
        super().run()
        root = proto_root()
        out = os.path.abspath(self.build_lib)
        protos = sorted(
            os.path.relpath(p, root)
            for p in glob.glob(os.path.join(root, "ridgeline", "v1", "*.proto")))
        v1 = os.path.join(out, "ridgeline", "v1")
        # Stale modules of a removed .proto must not survive a rebuild.
        shutil.rmtree(v1, ignore_errors=True)
        os.makedirs(v1)
        # -I <root>: imports are "ridgeline/v1/x.proto", so the generated
        # modules import each other as ridgeline.v1.x_pb2.
        cmd = protoc_command() + ["-I", root, "--python_out=" + out,
                                  "--grpc_python_out=" + out] + protos
        subprocess.check_call(cmd)
        with open(os.path.join(v1, "__init__.py"), "w") as f:
            f.write('"""Generated from proto/ridgeline/v1: %s."""\n'
                    % ", ".join(os.path.basename(p) for p in protos))


setup(cmdclass={"build_py": BuildWithStubs})
