`default_nettype none
`include "chip_defs.vh"
// controller: fetches, checks and dispatches one instruction at a time, and keeps the counters
// (hw/ISA.md, "Counters"): the cycle counters from its own state and unit selects, the event
// counters from what it checks and from the events the units report. Each counter is a register
// of its own (cnt_total .. ev_sm_range, as in hw/ISA.md), brought out at its place in the one
// `counters` bus that chip_defs.vh lays out (its COUNTERS_BUS names the registers).
//
// Per instruction (hw/ISA.md, "Cycle costs"):
//   FETCH  cycle 0 commands a read stream of the four words pc .. pc+3 from the memory
//          interface unit (mem_if.v), and FETCH ends with the cycle the fourth word arrives
//          (EXT_LAT + 6 cycles on the ideal memory). When pc .. pc+3 is outside external memory
//          nothing is read and FETCH is that one cycle. A bus error on a fetched word stops the
//          run there, with BUS_ERROR.
//   CHECK  1 cycle: the error checks; a failing check or HALT stops the run here, otherwise the
//          unit's one-cycle command is raised in this cycle
//   EXEC   the unit's cycles, ending with the cycle in which the unit raises its `done`; a paged
//          instruction whose block table names a page outside the pool raises `unit_fault` with
//          it, and the run stops with BAD_PAGE (hw/ISA.md, "Errors"); a bus error during EXEC
//          stops it there with BUS_ERROR
// The instruction register is held during EXEC: the units read their operand fields from it.
//
// In a cycle with `stall` high (the memory interface unit waits on memory) nothing here
// changes but cnt_total and cnt_wait: the controller and its counters follow the ideal memory's
// schedule in the other cycles (hw/ISA.md, "Exact by construction").
//
// With PARITY, the controller keeps the chip's parity checks (hw/ISA.md, "CORRUPTION"): a parity
// bit over the instruction register and one over all the counters, each loaded with its
// registers' next values, and the scratchpad's read checks (every read); a failed check
// is remembered (`corrupt`) and stops the run with CORRUPTION at the next instruction boundary.
module controller #(
    parameter EXT_WORDS  = `EXT_WORDS_DEFAULT,     // external words the chip may address
    parameter SRAM_WORDS = `SRAM_WORDS_DEFAULT,    // SRAM words
    parameter K_MAX      = `K_MAX_DEFAULT,         // the longest MATMUL reduction
    parameter SM_MAX     = `SM_MAX_DEFAULT,        // the longest SOFTMAX vector
    parameter PARITY     = `DETECTION_DEFAULT      // 1: the parity checks behind CORRUPTION
) (
    input  wire        clk,
    input  wire        rst,

    // host
    input  wire        start,        // one cycle while idle: run from external address 0
    output wire        busy,
    output wire        done,
    output wire [`ERROR_W-1:0] error,
    output wire [15:0] error_pc,

    // the memory interface unit: the fetch's read stream (the units own it during EXEC)
    input  wire        stall,        // this cycle is frozen
    input  wire        bus_err,      // a bus error since start
    output wire        mem_clear,    // the run starts: clears bus_err
    output wire        fetch_cmd,    // a read stream of 4 words at fetch_addr
    output wire [15:0] fetch_addr,
    input  wire        rd_valid,     // a word arrives
    input  wire [31:0] rd_data,

    // decoded fields of the current instruction, stable during EXEC
    output wire [7:0]  op_m,
    output wire [7:0]  op_k,
    output wire [7:0]  op_n,
    output wire [15:0] op_len,
    output wire [15:0] op_a,
    output wire [15:0] op_b,
    output wire [15:0] op_c,
    output wire [7:0]  op_flags,
    output wire [7:0]  op_shift,
    output wire [31:0] op_mult,

    // the paged geometry of the current instruction (paged_geometry.v), for the paged DMA
    output wire [15:0] pg_page_rows,
    output wire [23:0] pg_words,
    output wire [15:0] pg_first_entry,
    output wire [31:0] pg_entries,

    // dispatch: one-cycle commands (in the CHECK cycle), unit selects (during EXEC)
    output wire        go_load,
    output wire        go_store,
    output wire        go_matmul,
    output wire        go_vadd,
    output wire        go_vmax,
    output wire        go_argmax,
    output wire        go_softmax,
    output wire        go_pload,
    output wire        go_pstore,
    output wire        go_pcopy,
    output wire        sel_dma,
    output wire        sel_mat,
    output wire        sel_vec,
    output wire        sel_sm,
    output wire        sel_pdma,
    input  wire        unit_done,    // the running unit's last cycle
    input  wire        unit_fault,   // with unit_done: the paged DMA stopped on BAD_PAGE
    input  wire        sat_event,    // a requant or VADD output was clamped this cycle
    input  wire        dma_word,     // the DMA wrote a word this cycle (LOAD: SRAM, STORE: ext)
    input  wire        sm_exp_valid, // the softmax unit looked up the exp table this cycle
    input  wire [7:0]  sm_exp_index, // .. at this index (max - x)
    input  wire        pt_word,      // the paged DMA received a block-table word this cycle
    input  wire        sram_a_bad,   // the scratchpad's port A read a word failing its parity
    input  wire        sram_b_bad,   // .. port B

    // the counters (hw/ISA.md, "Counters"), cleared by start: counter X at counters[`X]
    output wire [`COUNTERS_W-1:0] counters
);

localparam [31:0] EXT_LIMIT  = EXT_WORDS[31:0];     // the memory sizes, as 32-bit operands
localparam [31:0] SRAM_LIMIT = SRAM_WORDS[31:0];
localparam [31:0] K_LIMIT    = K_MAX[31:0];
localparam [31:0] SM_LIMIT   = SM_MAX[31:0];

initial begin
    /* verilator coverage_off */    // parameter checks: only a bad parameter reaches their $finish
    `CHECK_RANGE("EXT_WORDS", EXT_WORDS, `EXT_WORDS_LO, `EXT_WORDS_HI)
    `CHECK_RANGE("SRAM_WORDS", SRAM_WORDS, `SRAM_WORDS_LO, `SRAM_WORDS_HI)
    `CHECK_RANGE("K_MAX", K_MAX, `K_MAX_LO, `K_MAX_HI)
    `CHECK_RANGE("SM_MAX", SM_MAX, `SM_MAX_LO, `SM_MAX_HI)
    `CHECK_RANGE("PARITY", PARITY, 0, 1)
    /* verilator coverage_on */
end

// ---------------------------------------------------------------------------------------------
// state

reg [`CTL_STATE_W-1:0] state_reg,    state_next;
reg [2:0]              fcnt_reg,     fcnt_next;       // FETCH: 0, then 1 + the words arrived
reg [16:0]             pc_reg,       pc_next;         // the instruction's address (pc + 4 <= 65536)
reg [127:0]            ir_reg,       ir_next;         // the instruction: word i at [32*i +: 32]
reg [`ERROR_W-1:0]     error_reg,    error_next;      // the run's error (ERR_OK: none)
reg [15:0]             error_pc_reg, error_pc_next;   // the instruction it stopped at

assign error    = error_reg;
assign error_pc = error_pc_reg;

// ---------------------------------------------------------------------------------------------
// decode

wire [31:0] w0 = ir_reg[31:0];
wire [31:0] w1 = ir_reg[63:32];
wire [31:0] w2 = ir_reg[95:64];
wire [31:0] w3 = ir_reg[127:96];

wire [`OPCODE_W-1:0] opcode = w0[31:24];

assign op_m     = w0[23:16];
assign op_k     = w0[15:8];
assign op_n     = w0[7:0];
assign op_len   = w0[15:0];
assign op_a     = w1[31:16];
assign op_b     = w1[15:0];
assign op_c     = w2[31:16];
assign op_flags = w2[15:8];
assign op_shift = w2[7:0];
assign op_mult  = w3;

wire op_copy = (opcode == `OP_PCOPY);    // PCOPY (its paged geometry differs)

// the paged instructions' fields: word 3 is row (high half) and pages (low half)
wire [15:0] op_row   = w3[31:16];
wire [15:0] op_pages = w3[15:0];

// ---------------------------------------------------------------------------------------------
// checks (all arithmetic in 32 bits: no sum or product can wrap)

wire [31:0] pc_32   = {15'd0, pc_reg};
wire [31:0] a_32    = {16'd0, op_a};
wire [31:0] b_32    = {16'd0, op_b};
wire [31:0] c_32    = {16'd0, op_c};
wire [31:0] len_32  = {16'd0, op_len};
wire [31:0] m_32    = {24'd0, op_m};
wire [31:0] k_32    = {24'd0, op_k};
wire [31:0] n_32    = {24'd0, op_n};

wire fetch_ok   = (pc_32 + 32'd4) <= EXT_LIMIT;

wire len_zero   = (op_len == 16'd0);
wire a_len_bad  = (a_32 + len_32) > SRAM_LIMIT;
wire b_len_bad  = (b_32 + len_32) > SRAM_LIMIT;
wire c_len_bad  = (c_32 + len_32) > SRAM_LIMIT;
wire c_one_bad  = (c_32 + 32'd1) > SRAM_LIMIT;
wire ext_bad    = (a_32 + len_32) > EXT_LIMIT;
wire mm_size_bad = (op_m == 8'd0) || (op_k == 8'd0) || (op_n == 8'd0) || (k_32 > K_LIMIT);
wire mm_addr_bad = ((a_32 + m_32 * k_32) > SRAM_LIMIT) ||
                   ((b_32 + k_32 * n_32) > SRAM_LIMIT) ||
                   ((c_32 + m_32 * n_32) > SRAM_LIMIT);

// paged instructions: the block table (or PCOPY's pair) at a, the scratchpad rows at b, the pool
// at c (hw/ISA.md, "Paged instructions"); paged_geometry.v holds the rule for their sizes, and
// this one instance serves the paged DMA too (the pg_ outputs)
wire [31:0] pg_table_span;
wire [47:0] pg_pool_words;
wire        pg_size_bad;

paged_geometry u_paged_geometry (
    .copy        (op_copy),
    .row_words   (op_m),
    .len         (op_len),
    .page_shift  (op_shift),
    .row         (op_row),
    .pages       (op_pages),
    .page_rows   (pg_page_rows),
    .words       (pg_words),
    .first_entry (pg_first_entry),
    .entries     (pg_entries),
    .table_span  (pg_table_span),
    .pool_words  (pg_pool_words),
    .size_bad    (pg_size_bad)
);

wire pg_addr_bad = ((b_32 + {8'd0, pg_words}) > SRAM_LIMIT) ||
                   ((a_32 + pg_table_span) > EXT_LIMIT) ||
                   (({32'd0, op_c} + pg_pool_words) > {16'd0, EXT_LIMIT});

reg       legal;
reg       size_bad;
reg       addr_bad;

always @* begin
    legal    = 1'b1;
    size_bad = 1'b0;
    addr_bad = 1'b0;
    case (opcode)
        `OP_HALT: begin
        end
        `OP_LOAD, `OP_STORE: begin
            size_bad = len_zero;
            addr_bad = ext_bad || b_len_bad;
        end
        `OP_MATMUL: begin
            size_bad = mm_size_bad;
            addr_bad = mm_addr_bad;
        end
        `OP_VADD: begin
            size_bad = len_zero;
            addr_bad = a_len_bad || b_len_bad || c_len_bad;
        end
        `OP_VMAX, `OP_ARGMAX: begin
            size_bad = len_zero;
            addr_bad = a_len_bad || c_one_bad;
        end
        `OP_SOFTMAX: begin
            size_bad = len_zero || (len_32 > SM_LIMIT);
            addr_bad = a_len_bad || c_len_bad;
        end
        `OP_PLOAD, `OP_PSTORE, `OP_PCOPY: begin
            size_bad = pg_size_bad;
            addr_bad = pg_addr_bad;
        end
        default: begin
            legal = 1'b0;
        end
    endcase
end

wire [`ERROR_W-1:0] check_code = !fetch_ok ? `ERR_BAD_ADDRESS    :
                                 !legal    ? `ERR_ILLEGAL_OPCODE :
                                 size_bad  ? `ERR_BAD_SIZE       :
                                 addr_bad  ? `ERR_BAD_ADDRESS    :
                                             `ERR_OK;

wire checking = (state_reg == `CTL_CHECK);
wire passes   = checking && (check_code == `ERR_OK);
wire stopping = checking && ((check_code != `ERR_OK) || (opcode == `OP_HALT));
wire launch   = passes && (opcode != `OP_HALT);

// ---------------------------------------------------------------------------------------------
// fetch, dispatch, status

wire fetching = (state_reg == `CTL_FETCH);
wire in_exec  = (state_reg == `CTL_EXEC);
wire fetch_first = fetching && (fcnt_reg == 3'd0);
wire fetch_last  = fetching && (fcnt_reg == 3'd4) && rd_valid;    // the fourth word arrives

// a fetched word (the read data is the units' too, and changes in most cycles: the next-state
// block sees it only while fetching, for on Icarus each change would run the block)
wire        fetch_word = fetching && rd_valid;
wire [31:0] fetch_data = rd_data & {32{fetching}};

assign busy     = fetching || checking || in_exec;
assign done     = (state_reg == `CTL_DONE);
assign fetch_cmd  = fetch_first && fetch_ok;
assign fetch_addr = pc_reg[15:0];

assign go_load    = launch && (opcode == `OP_LOAD);
assign go_store   = launch && (opcode == `OP_STORE);
assign go_matmul  = launch && (opcode == `OP_MATMUL);
assign go_vadd    = launch && (opcode == `OP_VADD);
assign go_vmax    = launch && (opcode == `OP_VMAX);
assign go_argmax  = launch && (opcode == `OP_ARGMAX);
assign go_softmax = launch && (opcode == `OP_SOFTMAX);
assign go_pload   = launch && (opcode == `OP_PLOAD);
assign go_pstore  = launch && (opcode == `OP_PSTORE);
assign go_pcopy   = launch && (opcode == `OP_PCOPY);

assign sel_dma = in_exec && ((opcode == `OP_LOAD) || (opcode == `OP_STORE));
assign sel_mat = in_exec && (opcode == `OP_MATMUL);
assign sel_vec = in_exec && ((opcode == `OP_VADD) || (opcode == `OP_VMAX) ||
                              (opcode == `OP_ARGMAX));
assign sel_sm  = in_exec && (opcode == `OP_SOFTMAX);
assign sel_pdma = in_exec && ((opcode == `OP_PLOAD) || (opcode == `OP_PSTORE) ||
                              (opcode == `OP_PCOPY));

wire sm_finish = sel_sm && unit_done;    // the softmax unit's last cycle

wire idle     = (state_reg == `CTL_IDLE) || (state_reg == `CTL_DONE);
wire starting = idle && start;

assign mem_clear = starting;

always @* begin
    state_next    = state_reg;
    fcnt_next     = fcnt_reg;
    pc_next       = pc_reg;
    ir_next       = ir_reg;
    error_next    = error_reg;
    error_pc_next = error_pc_reg;

    case (state_reg)
        `CTL_IDLE, `CTL_DONE: begin
            if (start) begin
                state_next    = `CTL_FETCH;
                fcnt_next     = 3'd0;
                pc_next       = 17'd0;
                error_next    = `ERR_OK;
                error_pc_next = 16'd0;
            end
        end
        `CTL_FETCH: begin
            if (fetch_word) begin
                ir_next = {fetch_data, ir_reg[127:32]};
            end
            if (fetch_first || fetch_word) begin
                fcnt_next = fcnt_reg + 3'd1;
            end
            if (fetch_first && !fetch_ok) begin
                state_next = `CTL_CHECK;    // nothing to read: the check fails
            end else if (fetch_last && bus_err) begin
                state_next    = `CTL_DONE;
                error_next    = `ERR_BUS_ERROR;
                error_pc_next = pc_reg[15:0];
            end else if (fetch_last) begin
                state_next = `CTL_CHECK;
            end
        end
        `CTL_CHECK: begin
            if (corrupt) begin
                state_next    = `CTL_DONE;
                error_next    = `ERR_CORRUPTION;
                error_pc_next = pc_reg[15:0];
            end else if (stopping) begin
                state_next    = `CTL_DONE;
                error_next    = check_code;
                error_pc_next = pc_reg[15:0];
            end else begin
                state_next = `CTL_EXEC;
            end
        end
        `CTL_EXEC: begin
            if (unit_done && corrupt) begin
                state_next    = `CTL_DONE;
                error_next    = `ERR_CORRUPTION;
                error_pc_next = pc_reg[15:0];
            end else if (unit_done && bus_err) begin
                state_next    = `CTL_DONE;
                error_next    = `ERR_BUS_ERROR;
                error_pc_next = pc_reg[15:0];
            end else if (unit_done && unit_fault) begin
                state_next    = `CTL_DONE;
                error_next    = `ERR_BAD_PAGE;
                error_pc_next = pc_reg[15:0];
            end else if (unit_done) begin
                state_next = `CTL_FETCH;
                fcnt_next  = 3'd0;
                pc_next    = pc_reg + 17'd4;
            end
        end
        /* verilator coverage_off */    // unreachable: state_reg holds only the states above
        default: begin
            state_next = `CTL_IDLE;
        end
        /* verilator coverage_on */
    endcase
end

// a register can change only with a start, a fetch's first cycle or word, a check or a unit's
// last cycle: they are loaded only then (on Icarus every register copied costs), and never in a
// stalled cycle (hw/ISA.md, "Exact by construction")
wire changing = start || fetch_first || fetch_word || checking || unit_done;
wire loading  = !stall && changing;    // the registers (and the IR's parity) load

always @(posedge clk) begin
    if (rst) begin
        state_reg    <= `CTL_IDLE;
        fcnt_reg     <= 3'd0;
        pc_reg       <= 17'd0;
        ir_reg       <= 128'd0;
        error_reg    <= `ERR_OK;
        error_pc_reg <= 16'd0;
    end else if (loading) begin
        state_reg    <= state_next;
        fcnt_reg     <= fcnt_next;
        pc_reg       <= pc_next;
        ir_reg       <= ir_next;
        error_reg    <= error_next;
        error_pc_reg <= error_pc_next;
    end
end

// ---------------------------------------------------------------------------------------------
// counters

reg [`CNT_TOTAL_W-1:0]     cnt_total;
reg [`CNT_DMA_W-1:0]       cnt_dma;
reg [`CNT_MAT_W-1:0]       cnt_mat;
reg [`CNT_VEC_W-1:0]       cnt_vec;
reg [`CNT_SM_W-1:0]        cnt_sm;
reg [`EV_INSTR_W-1:0]      ev_instr;
reg [`EV_SAT_W-1:0]        ev_sat;
reg [`EV_OPS_W-1:0]        ev_ops;          // opcode i's count at [`EV_OPS_COUNT_W*i +: ..]
reg [`EV_DMA_WORDS_W-1:0]  ev_dma_words;
reg [`EV_SM_MAX_LEN_W-1:0] ev_sm_max_len;
reg [`EV_SM_RANGE_W-1:0]   ev_sm_range;
reg [`EV_PT_WORDS_W-1:0]   ev_pt_words;
reg [`CNT_WAIT_W-1:0]      cnt_wait;

assign counters = `COUNTERS_BUS;    // every register at its place (chip_defs.vh)

// each counter's next value, one expression each (the parity bit is loaded with their parity):
// start clears them; a frozen cycle counts only cnt_total and cnt_wait; an advancing one its
// events (hw/ISA.md, "Counters")
wire counting = !starting && !stall;    // an advancing cycle of a run, or of an idle chip

wire [`CNT_TOTAL_W-1:0] cnt_total_next = starting ? {`CNT_TOTAL_W{1'b0}} :
    cnt_total + {{(`CNT_TOTAL_W-1){1'b0}}, stall || busy};
wire [`CNT_WAIT_W-1:0] cnt_wait_next = starting ? {`CNT_WAIT_W{1'b0}} :
    cnt_wait + {{(`CNT_WAIT_W-1){1'b0}}, stall};
wire [`CNT_DMA_W-1:0] cnt_dma_next = starting ? {`CNT_DMA_W{1'b0}} :
    cnt_dma + {{(`CNT_DMA_W-1){1'b0}}, counting && (sel_dma || sel_pdma)};
wire [`CNT_MAT_W-1:0] cnt_mat_next = starting ? {`CNT_MAT_W{1'b0}} :
    cnt_mat + {{(`CNT_MAT_W-1){1'b0}}, counting && sel_mat};
wire [`CNT_VEC_W-1:0] cnt_vec_next = starting ? {`CNT_VEC_W{1'b0}} :
    cnt_vec + {{(`CNT_VEC_W-1){1'b0}}, counting && sel_vec};
wire [`CNT_SM_W-1:0] cnt_sm_next = starting ? {`CNT_SM_W{1'b0}} :
    cnt_sm + {{(`CNT_SM_W-1){1'b0}}, counting && sel_sm};
wire [`EV_INSTR_W-1:0] ev_instr_next = starting ? {`EV_INSTR_W{1'b0}} :
    ev_instr + {{(`EV_INSTR_W-1){1'b0}}, counting && passes};
wire [`EV_SAT_W-1:0] ev_sat_next = starting ? {`EV_SAT_W{1'b0}} :
    ev_sat + {{(`EV_SAT_W-1){1'b0}}, counting && sat_event};
wire [`EV_DMA_WORDS_W-1:0] ev_dma_words_next = starting ? {`EV_DMA_WORDS_W{1'b0}} :
    ev_dma_words + {{(`EV_DMA_WORDS_W-1){1'b0}}, counting && dma_word};
wire [`EV_PT_WORDS_W-1:0] ev_pt_words_next = starting ? {`EV_PT_WORDS_W{1'b0}} :
    ev_pt_words + {{(`EV_PT_WORDS_W-1){1'b0}}, counting && pt_word};
wire [`EV_SM_MAX_LEN_W-1:0] ev_sm_max_len_next = starting ? {`EV_SM_MAX_LEN_W{1'b0}} :
    (counting && sm_finish && (op_len > ev_sm_max_len)) ? op_len : ev_sm_max_len;
wire [`EV_SM_RANGE_W-1:0] ev_sm_range_next = starting ? {`EV_SM_RANGE_W{1'b0}} :
    (counting && sm_exp_valid && (sm_exp_index > ev_sm_range)) ? sm_exp_index : ev_sm_range;

// ev_ops: one count per opcode, opcode i's at [`EV_OPS_COUNT_W*i +: ..]
wire [`EV_OPS_W-1:0] ev_ops_next;
genvar op;
generate
    for (op = 0; op < `N_OPCODES; op = op + 1) begin : g_ev_ops
        localparam [`OPCODE_W-1:0] OPCODE = op;
        wire [`EV_OPS_COUNT_W-1:0] count = ev_ops[`EV_OPS_COUNT_W*op +: `EV_OPS_COUNT_W];
        assign ev_ops_next[`EV_OPS_COUNT_W*op +: `EV_OPS_COUNT_W] =
            starting ? {`EV_OPS_COUNT_W{1'b0}} :
            count + {{(`EV_OPS_COUNT_W-1){1'b0}}, counting && passes && (opcode == OPCODE)};
    end
endgenerate

wire [`COUNTERS_W-1:0] counters_next = {cnt_total_next, cnt_dma_next, cnt_mat_next,
    cnt_vec_next, cnt_sm_next, ev_instr_next, ev_sat_next, ev_ops_next, ev_dma_words_next,
    ev_sm_max_len_next, ev_sm_range_next, ev_pt_words_next, cnt_wait_next};

always @(posedge clk) begin
    if (rst) begin
        cnt_total     <= {`CNT_TOTAL_W{1'b0}};
        cnt_dma       <= {`CNT_DMA_W{1'b0}};
        cnt_mat       <= {`CNT_MAT_W{1'b0}};
        cnt_vec       <= {`CNT_VEC_W{1'b0}};
        cnt_sm        <= {`CNT_SM_W{1'b0}};
        ev_instr      <= {`EV_INSTR_W{1'b0}};
        ev_sat        <= {`EV_SAT_W{1'b0}};
        ev_ops        <= {`EV_OPS_W{1'b0}};
        ev_dma_words  <= {`EV_DMA_WORDS_W{1'b0}};
        ev_sm_max_len <= {`EV_SM_MAX_LEN_W{1'b0}};
        ev_sm_range   <= {`EV_SM_RANGE_W{1'b0}};
        ev_pt_words   <= {`EV_PT_WORDS_W{1'b0}};
        cnt_wait      <= {`CNT_WAIT_W{1'b0}};
    end else begin
        cnt_total     <= cnt_total_next;
        cnt_dma       <= cnt_dma_next;
        cnt_mat       <= cnt_mat_next;
        cnt_vec       <= cnt_vec_next;
        cnt_sm        <= cnt_sm_next;
        ev_instr      <= ev_instr_next;
        ev_sat        <= ev_sat_next;
        ev_ops        <= ev_ops_next;
        ev_dma_words  <= ev_dma_words_next;
        ev_sm_max_len <= ev_sm_max_len_next;
        ev_sm_range   <= ev_sm_range_next;
        ev_pt_words   <= ev_pt_words_next;
        cnt_wait      <= cnt_wait_next;
    end
end

// ---------------------------------------------------------------------------------------------
// parity checks (hw/ISA.md, "CORRUPTION")

wire corrupt;    // a check failed since start, or fails now

generate
    if (PARITY) begin : g_parity
        reg ir_par_reg;        // ^ir_reg
        reg cnt_par_reg;       // ^counters
        reg corrupt_reg;       // a check failed since start

        wire ir_bad  = busy && ((^ir_reg) != ir_par_reg);
        wire cnt_bad = (^counters) != cnt_par_reg;

        assign corrupt = corrupt_reg || ir_bad || cnt_bad || sram_a_bad || sram_b_bad;

        always @(posedge clk) begin
            if (rst) begin
                ir_par_reg  <= 1'b0;
                cnt_par_reg <= 1'b0;
                corrupt_reg <= 1'b0;
            end else begin
                if (loading) begin
                    ir_par_reg <= ^ir_next;
                end
                cnt_par_reg <= ^counters_next;
                corrupt_reg <= !starting && corrupt;
            end
        end
    end else begin : g_no_parity
        assign corrupt = 1'b0;
        wire unused_parity = &{1'b0, sram_a_bad, sram_b_bad, counters_next};
    end
endgenerate

// a fetch address never reaches bit 16: no request is made unless pc + 3 < EXT_WORDS <= 65536
wire unused_controller = &{1'b0, pc_reg[16]};

`ifdef FORMAL    // the formal flow's invariants of these registers (hw/formal)
`include "controller_invariants.vh"
`endif

endmodule

`default_nettype wire
