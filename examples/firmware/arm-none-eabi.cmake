# CMake toolchain file for a Cortex-M4F (Armv7E-M with its single-precision
# FPU, hard-float ABI) and the GNU Arm toolchain with newlib (Debian:
# gcc-arm-none-eabi libnewlib-arm-none-eabi). It fits any Cortex-M4F board,
# among them the mps2-an386 that qemu-system-arm emulates:
#
#   cmake -S examples/firmware -B build-fw -DCMAKE_TOOLCHAIN_FILE=examples/firmware/arm-none-eabi.cmake
#
# Every object of one firmware image must share these CPU flags (objects of
# different float ABIs do not link), so they are set here, for the whole
# build, and hybgen_add_model(... ARCH cortex-m4) adds none of its own.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)

set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)

# No operating system to run a test program on: CMake's compiler checks
# build a static library instead of an executable.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(HYBGEN_FIRMWARE_CPU_FLAGS "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16")
# Each function and constant in its own section, so the linker drops what the
# program never calls.
set(CMAKE_C_FLAGS_INIT "${HYBGEN_FIRMWARE_CPU_FLAGS} -ffunction-sections -fdata-sections")
set(CMAKE_CXX_FLAGS_INIT "${HYBGEN_FIRMWARE_CPU_FLAGS} -ffunction-sections -fdata-sections -fno-exceptions -fno-rtti")
set(CMAKE_ASM_FLAGS_INIT "${HYBGEN_FIRMWARE_CPU_FLAGS}")
# newlib-nano: the small C library for microcontrollers.
set(CMAKE_EXE_LINKER_FLAGS_INIT "--specs=nano.specs -Wl,--gc-sections")

# Tools such as hybgen run on the build machine; headers and libraries are
# the cross toolchain's. Packages are looked for in both, so that
# find_package(hybgen) finds the one installed for the build machine.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
