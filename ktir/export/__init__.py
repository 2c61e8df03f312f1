"""
Exporters of ktir programs to other stacks' formats: SuperDSC JSON (`superdsc`), and RFC 0682
`ktdp` programs built from core-level kernels (`to_ktdp`).
"""
