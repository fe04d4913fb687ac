// The invariants of controller's registers (included inside hw/rtl/controller.v under `ifdef
// FORMAL): the property monitor controller_props (hw/formal/controller.sv) watches the
// controller's ports, and these assertions tie its state to the controller's registers, so that
// k-induction cannot start from a state that no run reaches (a stall freezes both, so without
// them an unreachable one could last any k cycles).

wire                  f_past_valid, f_exec;
wire [2:0]            f_owed, f_words;
wire [`OPCODE_W-1:0]  f_op;
wire [16:0]           f_pc;
wire [31:0]           f_launched;

controller_props f_props (
    .clk (clk), .rst (rst), .start (start), .stall (stall), .bus_err (bus_err),
    .rd_valid (rd_valid), .rd_data (rd_data), .unit_done (unit_done), .unit_fault (unit_fault),
    .sat_event (sat_event), .dma_word (dma_word), .pt_word (pt_word),
    .sm_exp_valid (sm_exp_valid), .busy (busy),
    .done (done), .error (error), .error_pc (error_pc), .fetch_cmd (fetch_cmd),
    .fetch_addr (fetch_addr),
    .gos ({go_load, go_store, go_matmul, go_vadd, go_vmax, go_argmax, go_softmax, go_pload,
           go_pstore, go_pcopy}),
    .sels ({sel_dma, sel_mat, sel_vec, sel_sm, sel_pdma}), .counters (counters),
    .f_past_valid (f_past_valid), .f_owed (f_owed), .f_words (f_words), .f_op (f_op),
    .f_exec (f_exec), .f_pc (f_pc), .f_launched (f_launched)
);

wire        f_fetched = (state_reg == `CTL_FETCH) && (fcnt_reg != 3'd0);  // words commanded
wire [31:0] f_insns   = {17'd0, pc_reg[16:2]};    // the instructions completed since start
reg  [31:0] f_ops_max;                            // the largest ev_ops count
integer     f_i;
always @(*) begin
    f_ops_max = 32'd0;
    for (f_i = 0; f_i < `N_OPCODES; f_i = f_i + 1)
        if ({16'd0, ev_ops[`EV_OPS_COUNT_W*f_i +: `EV_OPS_COUNT_W]} > f_ops_max)
            f_ops_max = {16'd0, ev_ops[`EV_OPS_COUNT_W*f_i +: `EV_OPS_COUNT_W]};
end

always @(*) begin
    if (f_past_valid) begin
        // the state register holds one of the five states; an error only once stopped
        I_STATE: assert (state_reg <= `CTL_DONE);
        I_NO_ERROR: assert (state_reg == `CTL_DONE || error_reg == `ERR_OK);
        // FETCH: 4 - n words owed after the command and n arrived (fcnt = 1 + n), none before;
        // the first word's opcode is where the instruction register has shifted it
        I_FETCH_COUNT: assert (!f_fetched || (fcnt_reg <= 3'd4 && f_owed == 3'd5 - fcnt_reg
                                              && f_words == fcnt_reg - 3'd1));
        I_NOT_OWED: assert (f_fetched || f_owed == 3'd0);
        I_FETCH_OP: assert (!f_fetched || fcnt_reg == 3'd1 || f_op == ir_reg[32*(6 - fcnt_reg)
                                                                             - 8 +: 8]);
        // a fetch is only commanded, and an instruction only runs, inside external memory
        I_FETCH_OK: assert (!(f_fetched || state_reg == `CTL_EXEC) || fetch_ok);
        // CHECK after a fetch, and EXEC: the instruction is the one fetched; EXEC runs a unit's
        // (HALT and illegal opcodes never pass their check), and exactly while one is commanded
        I_OPCODE: assert (!((state_reg == `CTL_CHECK && fetch_ok) || state_reg == `CTL_EXEC)
                          || f_op == opcode);
        I_EXEC: assert (f_exec == (state_reg == `CTL_EXEC));
        I_EXEC_UNIT: assert (state_reg != `CTL_EXEC || (sel_dma || sel_mat || sel_vec
                                                        || sel_sm || sel_pdma));
        // pc: a multiple of 4, the monitor's until the run stops (its pc counts the failing
        // instruction's done too)
        I_PC: assert (pc_reg[1:0] == 2'd0 && (state_reg == `CTL_DONE || f_pc == pc_reg));
        // the instructions commanded: one per completed instruction, + 1 during its EXEC (so
        // fewer than 2^14 + 2, and no ev_ops count can wrap); each count at most their sum
        I_LAUNCHED: assert (state_reg == `CTL_DONE ? f_launched <= f_insns + 32'd1
                            : f_launched == f_insns + {31'd0, state_reg == `CTL_EXEC});
        I_HALTED: assert (!(state_reg == `CTL_DONE && error_reg == `ERR_OK)
                          || f_launched == f_insns);
        I_OPS_RANGE: assert (f_ops_max <= ev_instr);
        // the parity bits hold their registers' parity, so no check has failed
        I_PARITY: assert (g_parity.ir_par_reg == ^ir_reg && g_parity.cnt_par_reg == ^counters
                          && !g_parity.corrupt_reg);
    end
end
