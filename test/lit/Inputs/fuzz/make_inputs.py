"""
Write the generated inputs of ktir-opt/fuzz_regressions.mlir and ktir-run/fuzz_regressions.mlir
into the directory given as the only argument: bytes that are not UTF-8, and nesting 600 deep.
"""

import sys
from pathlib import Path

FUNCTION = "func.func @f(%x: tensor<4x64xf16>) -> tensor<4x64xf16> {\n  return %x : tensor<4x64xf16>\n}\n"


def main(directory: str) -> None:
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    # Line 4, column 9 holds byte 0xff (byte offset 99: the é before it is two bytes).
    (out / "not_utf8.mlir").write_bytes(FUNCTION.encode() + b"// caf\xc3\xa9 \xff\n")
    depth = 600
    regions = '"test.op"() ({\n' * depth + '"test.op"() : () -> ()\n' + "}) : () -> ()\n" * depth
    (out / "deep_regions.mlir").write_text(regions)
    attribute = '"test.op"() {deep = ' + "[" * depth + "1" + "]" * depth + "} : () -> ()\n"
    (out / "deep_attribute.mlir").write_text(attribute)


if __name__ == "__main__":
    main(sys.argv[1])
