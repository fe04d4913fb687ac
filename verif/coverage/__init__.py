"""Coverage: the functional coverage points and their subscribers, the merge of the runs'
databases, and Verilator's code coverage."""
