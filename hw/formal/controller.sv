`default_nettype none
`include "chip_defs.vh"
// Formal properties of controller (hw/rtl/controller.v): one unit selected at a time, for
// exactly the EXEC of the fetched instruction (from its one-cycle command to the unit's done);
// `done` and `busy` exclusive; an error (BUS_ERROR, BAD_PAGE, a failing check) stops the run:
// nothing fetched, commanded or selected after it until the next start, its code and address
// held; and the counters count exactly their events (hw/ISA.md, "Counters"). The units and the
// memory interface unit are free inputs, constrained only by their contracts (assumptions
// below): the proof is about the controller alone.
//
// controller_fv is the top: it instantiates the controller, whose formal hook (hw/rtl/
// controller.v's `ifdef FORMAL) instantiates controller_props on its ports, as ZipCPU places
// a property checker inside the design: hw/formal/controller_invariants.vh, included there,
// names both the controller's registers and the monitor's state below (open Yosys has no
// hierarchical references) and ties them together, so that k-induction closes.
module controller_fv #(
    parameter EXT_WORDS  = `EXT_WORDS_DEFAULT,
    parameter SRAM_WORDS = `SRAM_WORDS_DEFAULT
) (
    input wire        clk,
    input wire        rst,
    input wire        start,
    input wire        stall,
    input wire        bus_err,
    input wire        rd_valid,
    input wire [31:0] rd_data,
    input wire        unit_done,
    input wire        unit_fault,
    input wire        sat_event,
    input wire        dma_word,
    input wire        sm_exp_valid,
    input wire [7:0]  sm_exp_index,
    input wire        pt_word
);

controller #(
    .EXT_WORDS  (EXT_WORDS),
    .SRAM_WORDS (SRAM_WORDS)
) dut (
    .clk            (clk),
    .rst            (rst),
    .start          (start),
    .busy           (),
    .done           (),
    .error          (),
    .error_pc       (),
    .stall          (stall),
    .bus_err        (bus_err),
    .mem_clear      (),
    .fetch_cmd      (),
    .fetch_addr     (),
    .rd_valid       (rd_valid),
    .rd_data        (rd_data),
    .op_m           (),
    .op_k           (),
    .op_n           (),
    .op_len         (),
    .op_a           (),
    .op_b           (),
    .op_c           (),
    .op_flags       (),
    .op_shift       (),
    .op_mult        (),
    .pg_page_rows   (),
    .pg_words       (),
    .pg_first_entry (),
    .pg_entries     (),
    .go_load        (),
    .go_store       (),
    .go_matmul      (),
    .go_vadd        (),
    .go_vmax        (),
    .go_argmax      (),
    .go_softmax     (),
    .go_pload       (),
    .go_pstore      (),
    .go_pcopy       (),
    .sel_dma        (),
    .sel_mat        (),
    .sel_vec        (),
    .sel_sm         (),
    .sel_pdma       (),
    .unit_done      (unit_done),
    .unit_fault     (unit_fault),
    .sat_event      (sat_event),
    .dma_word       (dma_word),
    .sm_exp_valid   (sm_exp_valid),
    .sm_exp_index   (sm_exp_index),
    .pt_word        (pt_word),
    .sram_a_bad     (1'b0),    // the scratchpad's words are all sound: no fault in a proof
    .sram_b_bad     (1'b0),
    .counters       ()
);


endmodule

// the properties, on the controller's ports; the monitor's state goes out to the invariants
module controller_props (
    input wire                   clk,
    input wire                   rst,
    input wire                   start,
    input wire                   stall,
    input wire                   bus_err,
    input wire                   rd_valid,
    input wire [31:0]            rd_data,
    input wire                   unit_done,
    input wire                   unit_fault,
    input wire                   sat_event,
    input wire                   dma_word,
    input wire                   pt_word,
    input wire                   sm_exp_valid,
    input wire                   busy,
    input wire                   done,
    input wire [`ERROR_W-1:0]    error,
    input wire [15:0]            error_pc,
    input wire                   fetch_cmd,
    input wire [15:0]            fetch_addr,
    input wire [9:0]             gos,          // go_load .. go_pcopy
    input wire [4:0]             sels,         // sel_dma, sel_mat, sel_vec, sel_sm, sel_pdma
    input wire [`COUNTERS_W-1:0] counters,
    output reg                   f_past_valid = 1'b0,
    output reg  [2:0]            f_owed,       // fetch words commanded and not yet delivered
    output reg  [2:0]            f_words,      // words of the current fetch arrived
    output reg  [`OPCODE_W-1:0]  f_op,         // the opcode of the fetched instruction (word 0)
    output reg                   f_exec,       // a unit was commanded and its done has not come
    output reg  [16:0]           f_pc,         // the instruction's address
    output reg  [31:0]           f_launched    // the units commanded since start
);

wire go      = |gos;
wire sel     = |sels;
wire sel_dma = sels[4], sel_mat = sels[3], sel_vec = sels[2], sel_sm = sels[1];
wire sel_pdma = sels[0];
wire advance = !stall;

// ---------------------------------------------------------------------------------------------
// the run as the host, the units and the memory interface unit see it

reg  [31:0]          f_total, f_wait, f_dma, f_mat, f_vec, f_sm;
reg  [31:0]          f_sat, f_dma_words, f_pt_words;
reg  [15:0]          f_ops [1:`N_OPCODES-1];   // the unit instructions commanded, per opcode
integer              j;

wire starting  = start && !busy;
wire fetch_wd  = rd_valid && (f_owed != 3'd0);     // a fetch word arrives
wire dma_op    = (f_op == `OP_LOAD) || (f_op == `OP_STORE) || (f_op == `OP_PLOAD)
                 || (f_op == `OP_PSTORE) || (f_op == `OP_PCOPY);
wire mat_op    = (f_op == `OP_MATMUL);
wire vec_op    = (f_op == `OP_VADD) || (f_op == `OP_VMAX) || (f_op == `OP_ARGMAX);
wire sm_op     = (f_op == `OP_SOFTMAX);
wire pdma_op   = (f_op == `OP_PLOAD) || (f_op == `OP_PSTORE) || (f_op == `OP_PCOPY);
wire exec_step = f_exec && advance;                // an advancing EXEC cycle

always @(posedge clk) begin
    f_past_valid <= 1'b1;
    if (rst || starting) begin
        f_owed <= 3'd0;
        f_words <= 3'd0;
        f_exec <= 1'b0;
        f_pc <= 17'd0;
        {f_total, f_wait, f_dma, f_mat, f_vec, f_sm} <= 192'd0;
        {f_launched, f_sat, f_dma_words, f_pt_words} <= 128'd0;
        for (j = 1; j < `N_OPCODES; j = j + 1) f_ops[j] <= 16'd0;
    end else begin
        if (busy) f_total <= f_total + 32'd1;
        if (stall) f_wait <= f_wait + 32'd1;
        if (advance) begin
            if (fetch_cmd) begin
                f_owed <= 3'd4;
                f_words <= 3'd0;
            end else if (fetch_wd) begin
                f_owed <= f_owed - 3'd1;
                f_words <= f_words + 3'd1;
            end
            if (fetch_wd && f_words == 3'd0) f_op <= rd_data[31:24];
            for (j = 1; j < `N_OPCODES; j = j + 1)    // gos is opcode 1 .. 10, msb first
                if (gos[`N_OPCODES - 1 - j]) f_ops[j] <= f_ops[j] + 16'd1;
            if (go) begin
                f_exec <= 1'b1;
                f_launched <= f_launched + 32'd1;
            end
            if (unit_done) begin
                f_exec <= 1'b0;
                f_pc <= f_pc + 17'd4;
            end
            if (exec_step && dma_op) f_dma <= f_dma + 32'd1;
            if (exec_step && mat_op) f_mat <= f_mat + 32'd1;
            if (exec_step && vec_op) f_vec <= f_vec + 32'd1;
            if (exec_step && sm_op) f_sm <= f_sm + 32'd1;
            if (sat_event) f_sat <= f_sat + 32'd1;
            if (dma_word) f_dma_words <= f_dma_words + 32'd1;
            if (pt_word) f_pt_words <= f_pt_words + 32'd1;
        end
    end
end

// ---------------------------------------------------------------------------------------------
// the contracts

always @(*) begin
    if (!f_past_valid) assume (rst);
    // memory interface unit: it stalls only while it owes a running instruction a word, a fence
    // or queue room (a fetch or an EXEC), never while the chip is idle or stopped
    STALL_WHILE_BUSY: assume (!stall || busy);
    // memory interface unit: a word arrives only in an advancing cycle, and outside EXEC only
    // one of the four the fetch commanded (the units' words come during their EXEC)
    WORD_OWED: assume (!rd_valid || (advance && (sel || f_owed != 3'd0)));
    // the units: a unit's done only during its EXEC, in an advancing cycle (a unit ends on a
    // delivered word, a completed fence or its own count); the fault only from the paged DMA
    UNIT_DONE_IN_EXEC: assume (!unit_done || (sel && advance));
    FAULT_FROM_PDMA: assume (!unit_fault || sel_pdma);
    // chip_top: each event comes from its own unit, while it is selected
    EVENTS_FROM_UNIT: assume ((!sat_event || sel_mat || sel_vec) && (!dma_word || sel_dma
                              || sel_pdma) && (!pt_word || sel_pdma) && (!sm_exp_valid || sel_sm));
end

// ---------------------------------------------------------------------------------------------
// the properties

integer i;
reg [31:0] ops_sum;
reg        ops_match;
always @(*) begin
    ops_sum = 32'd0;
    ops_match = 1'b1;
    for (i = 0; i < `N_OPCODES; i = i + 1)
    begin
        ops_sum = ops_sum + {16'd0, counters[`EV_OPS_LSB + `EV_OPS_COUNT_W*i +: `EV_OPS_COUNT_W]};
        if (i != 0 && counters[`EV_OPS_LSB + `EV_OPS_COUNT_W*i +: `EV_OPS_COUNT_W]
                      != f_ops[i])
            ops_match = 1'b0;
    end
end

always @(*) begin
    if (f_past_valid && !rst) begin
        // `done` and `busy` never together
        DONE_NOT_BUSY: assert (!(done && busy));
        // one unit commanded, and one selected, at a time; never a command during an EXEC
        ONE_UNIT: assert ($onehot0(gos) && $onehot0(sels) && !(go && sel));
        // a unit is selected exactly from the cycle after its command to its done
        SEL_IS_EXEC: assert (sel == f_exec);
        // .. and it is the fetched instruction's unit
        SEL_IS_OPCODE: assert (!sel || (sels == {dma_op && !pdma_op, mat_op, vec_op, sm_op,
                                                  pdma_op}));
        // the fetch reads the instruction at pc: 0 from start, + 4 after each completed one
        FETCH_AT_PC: assert (!fetch_cmd || fetch_addr == f_pc[15:0]);
        // a stopped run (done, with any error) fetches, commands and selects nothing
        QUIET_WHEN_DONE: assert (!done || !(fetch_cmd || go || sel));
        // no false alarm: without a fault, the parity checks never report CORRUPTION
        NO_CORRUPTION: assert (error != `ERR_CORRUPTION);
        // cnt_total: every cycle of the run; cnt_wait: exactly its frozen cycles
        CNT_TOTAL: assert (counters[`CNT_TOTAL] == f_total);
        CNT_WAIT: assert (counters[`CNT_WAIT] == f_wait);
        // the unit counters: the advancing EXEC cycles of their instructions
        CNT_UNITS: assert (counters[`CNT_DMA] == f_dma && counters[`CNT_MAT] == f_mat
                           && counters[`CNT_VEC] == f_vec && counters[`CNT_SM] == f_sm);
        // ev_instr: the instructions that passed their check: those commanded, and the
        // HALT that ends a run without error; ev_ops adds up to it
        EV_INSTR: assert (counters[`EV_INSTR] == f_launched + {31'd0, done
                                                               && error == `ERR_OK});
        EV_OPS_SUM: assert (ops_sum == counters[`EV_INSTR]);
        // ev_ops: each unit opcode's count is its instructions commanded, HALT's the one
        // that stopped the run without error
        EV_OPS: assert (ops_match && counters[`EV_OPS_LSB +: `EV_OPS_COUNT_W]
                                     == {15'd0, done && error == `ERR_OK});
        // the event counters: exactly their events, in advancing cycles
        EV_EVENTS: assert (counters[`EV_SAT] == f_sat && counters[`EV_DMA_WORDS] == f_dma_words
                           && counters[`EV_PT_WORDS] == f_pt_words);
    end
end

always @(posedge clk) begin
    if (f_past_valid && !rst) begin
        if (!$past(rst)) begin
            // a stop holds its code and address until the next start
            if ($past(done) && !$past(start)) begin
                STOP_HELD: assert (done && error == $past(error)
                                   && error_pc == $past(error_pc));
            end
            // a unit's done with a bus error since start stops the run with BUS_ERROR at pc
            if ($past(unit_done && bus_err)) begin
                BUS_ERROR_STOPS: assert (done && error == `ERR_BUS_ERROR
                                         && error_pc == $past(f_pc[15:0]));
            end
            // the fetch's fourth word with a bus error stops the run there (no CHECK)
            if ($past(fetch_wd && advance && f_owed == 3'd1 && bus_err)) begin
                FETCH_BUS_ERROR_STOPS: assert (done && error == `ERR_BUS_ERROR
                                               && error_pc == $past(f_pc[15:0]));
            end
            // the paged DMA's fault stops the run with BAD_PAGE at pc (a bus error wins)
            if ($past(unit_done && unit_fault && !bus_err)) begin
                BAD_PAGE_STOPS: assert (done && error == `ERR_BAD_PAGE
                                        && error_pc == $past(f_pc[15:0]));
            end
        end
    end
end

// the preconditions are reachable
always @(posedge clk) begin
    if (f_past_valid && !rst && !$past(rst)) begin
        C_DONE: cover (done && error == `ERR_OK && counters[`CNT_WAIT] != 0);
        C_UNIT: cover (sel_dma && $past(stall) && counters[`EV_INSTR] == 1);
        C_SECOND_FETCH: cover (fetch_cmd && f_pc != 17'd0);
        C_STOP_HELD: cover ($past(done) && !$past(start) && error == `ERR_BAD_ADDRESS);
        C_BUS_ERROR: cover ($past(unit_done && bus_err));
        C_FETCH_BUS_ERROR: cover ($past(fetch_wd && advance && f_owed == 3'd1 && bus_err));
        C_BAD_PAGE: cover ($past(unit_done && unit_fault && !bus_err));
        C_COUNTED: cover (counters[`CNT_MAT] != 0 && counters[`EV_SAT] != 0
                          && counters[`CNT_WAIT] != 0);
        C_PT_WORDS: cover (counters[`EV_PT_WORDS] != 0 && counters[`EV_DMA_WORDS] != 0);
        C_RESTART: cover (starting && done && error == `ERR_BAD_PAGE);
    end
end

endmodule

`default_nettype wire
