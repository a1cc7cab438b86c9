# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# qpnic: `make` builds the modules against KDIR; `make check` and
# `make demo` do all set-up themselves (see README.md).

KDIR ?= $(lastword $(sort $(wildcard /usr/src/linux-headers-6.1.0-*-amd64)))
BUILD ?= build/modules

.PHONY: all modules check demo bench profile soak deps clean deb dkms-check

all: modules

modules:
	scripts/build-modules.sh "$(KDIR)" $(BUILD)
	@find $(BUILD) -name '*.ko' -printf '  built %p\n'

# KERNELS="6.1 6.12" (the default) or one of them
check:
	KERNELS="$(KERNELS)" scripts/check.sh

demo:
	scripts/demo.sh

deps:
	scripts/deps.sh

# build/deb/qpnic-dkms_<version>_all.deb (packaging/debian), lintian-checked
deb:
	scripts/deps.sh
	scripts/build-deb.sh

# the .deb installed with apt-get and built by DKMS in a Debian 12 (6.1)
# and a Debian 13 (6.12) guest (see scripts/dkms-check.sh)
dkms-check:
	scripts/dkms-check.sh $(KERNELS)

clean:
	rm -rf build

# ROUNDS: data path rounds (3)
bench:
	scripts/bench.sh $(ROUNDS)

# where the CPU goes in qpnic's and rdma_rxe's data path (perf in the guest)
profile:
	scripts/profile.sh $(DRIVERS)

# SOAK_KERNEL=test|stock, SOAK_SECONDS (see scripts/soak.sh)
soak:
	scripts/soak.sh $(or $(SOAK_KERNEL),stock) $(or $(SOAK_SECONDS),300)
