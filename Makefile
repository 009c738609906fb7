# Thin front door: the two commands from the README.
#   make run   set up, build, and run the main job on the embedded default
#   make test  set up (incl. test peers), build, and pass all the tests
.PHONY: run test build clean

run:
	scripts/run.sh

test:
	scripts/test.sh

build:
	scripts/setup.sh
	cmake -S . -B build -G Ninja -DKNUT_WERROR=ON
	ninja -C build

clean:
	rm -rf build build-asan build-tsan build-fuzz
