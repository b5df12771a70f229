# The tools that compile and inspect the sm90a and sm100a kernels (no GPU needed), found once for
# kgen-verify and tests/cuda: nvcc 13, CUTLASS/CuTe headers, kgen's runtime and cuobjdump (+ nvdisasm)
# from the pinned PyPI packages in .venv.
# The CUDA runtime for host code that calls a kernel (the harness, the launcher test).
find_package(CUDAToolkit QUIET)
find_program(KGEN_NVCC nvcc HINTS /usr/local/cuda/bin /usr/local/cuda-13.0/bin DOC "nvcc 13 (CUDA 13)")
file(GLOB kgen_site_packages LIST_DIRECTORIES true "${CMAKE_SOURCE_DIR}/.venv/lib/python3*/site-packages")
if(NOT KGEN_CUTLASS_INCLUDE)
  set(KGEN_CUTLASS_INCLUDE "${kgen_site_packages}/cutlass_library/source/include")
endif()
if(NOT KGEN_CUOBJDUMP)
  set(KGEN_CUOBJDUMP "${kgen_site_packages}/nvidia/cu13/bin/cuobjdump")
endif()
set(KGEN_NVDISASM_DIR "" CACHE PATH "nvdisasm's folder, when it is not beside cuobjdump")
set(KGEN_COMPILE_CHECK "${CMAKE_SOURCE_DIR}/verify/cuda/compile_check.py")
# kgen's runtime headers (runtime/sm90a and runtime/cuda): every sm90a kernel includes them.
set(KGEN_RUNTIME_INCLUDE "${CMAKE_SOURCE_DIR}/runtime")
file(GLOB_RECURSE KGEN_SM90A_RUNTIME CONFIGURE_DEPENDS "${KGEN_RUNTIME_INCLUDE}/sm90a/*"
     "${KGEN_RUNTIME_INCLUDE}/cuda/*")
set(check_tools --nvcc "${KGEN_NVCC}" --cutlass-include "${KGEN_CUTLASS_INCLUDE}"
                --runtime-include "${KGEN_RUNTIME_INCLUDE}" --cuobjdump "${KGEN_CUOBJDUMP}")
if(KGEN_NVDISASM_DIR)
  list(APPEND check_tools --nvdisasm "${KGEN_NVDISASM_DIR}")
endif()
