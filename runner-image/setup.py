"""The runner's C extension; everything else is in pyproject.toml (whose ext-modules table
setuptools still calls experimental, with a warning at every install).

The pipelined YCSB clients on VoltDB as one compiled loop (tpcc_runner/ycsb/voltdb_compiled.py
says why). Optional: without a C compiler the package installs and those clients run the Python
loop, which the results name (driver.client_loop); hack/images.sh builds it into the runner image.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "tpcc_runner.ycsb._voltloop",
            ["tpcc_runner/ycsb/_voltloop.c"],
            optional=True,
            extra_compile_args=["-O2"],
        )
    ]
)
