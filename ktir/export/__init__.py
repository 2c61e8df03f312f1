"""Exporters of ktir programs to other stacks' formats: SuperDSC JSON (`superdsc`)."""
