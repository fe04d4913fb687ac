"""The formal flow: the blocks' properties (hw/formal) proven with SymbiYosys, the AXI4 rules'
negative checks, and the report."""
