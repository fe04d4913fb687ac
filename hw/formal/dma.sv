`default_nettype none
// Formal properties of dma (hw/rtl/dma.v): a LOAD commands one read stream of len words from
// a and writes word i to sram[b + i] as it arrives, done with the last; a STORE pushes
// sram[b + i] as word i of one write stream (command with the first push, fence with the last),
// done when the fence completes; one transfer at a time, one direction at a time, nothing
// issued or written outside a transfer (so nothing after its `done`), exactly len words each
// (the words `ev_dma_words` counts). The controller's contract (one command while idle, fields
// held, len >= 1) and the memory interface unit's (a word only when one is owed, fence_done
// only for a fence, nothing delivered in a stalled cycle; any stall pattern) are assumptions.
module dma_fv #(
    parameter SRAM_AW = 12
) (
    input wire               clk,
    input wire               rst,
    input wire               stall,
    input wire               cmd_load,
    input wire               cmd_store,
    input wire [15:0]        cmd_ext_addr,
    input wire [15:0]        cmd_sram_addr,
    input wire [15:0]        cmd_len,
    input wire               rd_valid,
    input wire [31:0]        rd_data,
    input wire               fence_done,
    input wire [31:0]        sram_rdata
);

dma #(
    .SRAM_AW (SRAM_AW)
) dut (
    .clk           (clk),
    .rst           (rst),
    .stall         (stall),
    .cmd_load      (cmd_load),
    .cmd_store     (cmd_store),
    .cmd_ext_addr  (cmd_ext_addr),
    .cmd_sram_addr (cmd_sram_addr),
    .cmd_len       (cmd_len),
    .done          (),
    .mem_addr      (),
    .mem_len       (),
    .rd_cmd        (),
    .rd_valid      (rd_valid),
    .rd_data       (rd_data),
    .wr_cmd        (),
    .wr_push       (),
    .wr_data       (),
    .fence         (),
    .fence_done    (fence_done),
    .sram_raddr    (),
    .sram_rdata    (sram_rdata),
    .sram_we       (),
    .sram_waddr    (),
    .sram_wdata    ()
);

endmodule

// the properties, on every port of the unit; the monitor's state goes out to the invariants
module dma_props #(
    parameter SRAM_AW = 12
) (
    input wire               clk,
    input wire               rst,
    input wire               stall,
    input wire               cmd_load,
    input wire               cmd_store,
    input wire [15:0]        cmd_ext_addr,
    input wire [15:0]        cmd_sram_addr,
    input wire [15:0]        cmd_len,
    input wire               done,
    input wire [15:0]        mem_addr,
    input wire [15:0]        mem_len,
    input wire               rd_cmd,
    input wire               rd_valid,
    input wire [31:0]        rd_data,
    input wire               wr_cmd,
    input wire               wr_push,
    input wire [31:0]        wr_data,
    input wire               fence,
    input wire               fence_done,
    input wire [SRAM_AW-1:0] sram_raddr,
    input wire [31:0]        sram_rdata,
    input wire               sram_we,
    input wire [SRAM_AW-1:0] sram_waddr,
    input wire [31:0]        sram_wdata,
    output reg               f_past_valid = 1'b0,
    output reg               f_busy = 1'b0,       // a command was accepted and its done has not come
    output reg               f_store = 1'b0,      // .. it is a STORE
    output reg               f_rd_cmds = 1'b0,    // LOAD: its read stream was commanded
    output reg  [16:0]       f_owed = 17'd0,      // read words commanded and not yet delivered
    output reg  [16:0]       f_words = 17'd0,     // words written (LOAD: SRAM) or pushed (STORE)
    output reg               f_fence = 1'b0,      // a fence was asked for and has not completed
    output reg [SRAM_AW-1:0] f_raddr = 0,         // the SRAM read address of the cycle before
    output reg  [15:0]       f_b,                 // the transfer's fields, as accepted
    output reg  [15:0]       f_len
);

// ---------------------------------------------------------------------------------------------
// the transfer as the controller and the memory interface unit see it

wire        accepted = (cmd_load || cmd_store) && !stall;    // a stalled command is ignored

wire [16:0] len_17   = {1'b0, cmd_len};
wire [16:0] waddr_17 = {1'b0, cmd_sram_addr} + f_words;
wire        last     = (f_words == len_17 - 17'd1);
wire        load_run = f_busy && !f_store;
wire        st_run   = f_busy && f_store;

always @(posedge clk) begin
    f_past_valid <= 1'b1;
    f_raddr <= sram_raddr;
    if (rst) begin
        f_busy <= 1'b0;
        f_rd_cmds <= 1'b0;
        f_owed <= 17'd0;
        f_words <= 17'd0;
        f_fence <= 1'b0;
    end else if (!stall) begin
        if (accepted) begin
            f_busy <= 1'b1;
            f_store <= cmd_store;
            f_rd_cmds <= 1'b0;
            f_words <= 17'd0;
        end else begin
            if (done) f_busy <= 1'b0;
            if (rd_cmd) f_rd_cmds <= 1'b1;
            if (sram_we || wr_push) f_words <= f_words + 17'd1;
        end
        f_owed <= f_owed + (rd_cmd ? {1'b0, mem_len} : 17'd0) - {16'd0, rd_valid};
        if (fence) f_fence <= 1'b1;
        else if (fence_done) f_fence <= 1'b0;
    end
end

// ---------------------------------------------------------------------------------------------
// the contracts

always @(*) if (!f_past_valid) assume (rst);
always @(*) begin
    // controller: one command at a time, only while no transfer runs (it commands in CHECK)
    ONE_COMMAND: assume (!(cmd_load && cmd_store));
    COMMAND_WHEN_IDLE: assume (!(cmd_load || cmd_store) || !f_busy);
    // controller: len >= 1 (a zero len fails its check with BAD_SIZE)
    LEN_NONZERO: assume (!(cmd_load || cmd_store) || cmd_len != 16'd0);
    // memory interface unit: a word only when a commanded one is owed, never in a stalled
    // cycle (its command took effect in an earlier cycle: EXT_LAT + 2 later at the soonest)
    WORD_OWED: assume (!rd_valid || (f_owed != 17'd0 && !stall));
    // memory interface unit: fence_done only for a fence asked in an earlier cycle, not stalled
    FENCE_OWED: assume (!fence_done || (f_fence && !stall));
end
reg [15:0] f_a;
always @(posedge clk) begin
    if (accepted) begin
        f_a <= cmd_ext_addr;
        f_b <= cmd_sram_addr;
        f_len <= cmd_len;
    end
    if (f_past_valid && !rst) begin
        // controller: a command raised in a stalled cycle is raised again (CHECK is held)
        if ($past(stall && (cmd_load || cmd_store) && !rst)) begin
            COMMAND_HELD: assume (cmd_load == $past(cmd_load) && cmd_store == $past(cmd_store)
                                  && cmd_ext_addr == $past(cmd_ext_addr)
                                  && cmd_sram_addr == $past(cmd_sram_addr)
                                  && cmd_len == $past(cmd_len));
        end
        // controller: the instruction register, and so the fields, is held during EXEC
        if (f_busy) begin
            FIELDS_HELD: assume (cmd_ext_addr == f_a && cmd_sram_addr == f_b && cmd_len == f_len);
        end
    end
end

// ---------------------------------------------------------------------------------------------
// the properties

always @(*) begin
    if (f_past_valid && !rst) begin
        // outside a transfer nothing is issued or written, and no done: nothing after a done
        QUIET_WHEN_IDLE: assert (f_busy || !(rd_cmd || wr_cmd || wr_push || fence || sram_we
                                             || done));
        // one direction at a time: a LOAD never pushes, a STORE never reads or writes the SRAM
        ONE_DIRECTION: assert (!((rd_cmd || sram_we) && (wr_cmd || wr_push || fence)));
        // LOAD: exactly one read stream, of len words from a
        if (rd_cmd && !stall) begin
            READ_STREAM: assert (load_run && !f_rd_cmds && mem_addr == cmd_ext_addr
                                 && mem_len == cmd_len);
        end
        // LOAD: every word arriving is written, word i to sram[b + i], at most len of them
        if (load_run && rd_valid) begin
            LOAD_WRITES_WORD: assert (sram_we);
        end
        if (sram_we) begin
            LOAD_WORD: assert (load_run && f_words < len_17 && sram_wdata == rd_data
                               && sram_waddr == waddr_17[SRAM_AW-1:0]);
        end
        // STORE: push i is the SRAM word at b + i (its registered read port read it last cycle)
        if (wr_push && !stall) begin
            STORE_WORD: assert (st_run && f_words < len_17 && wr_data == sram_rdata
                                && f_raddr == waddr_17[SRAM_AW-1:0]);
        end
        // STORE: one write stream of len words at a, commanded with the first push
        if (st_run && !stall && (wr_cmd || (wr_push && f_words == 17'd0))) begin
            WRITE_STREAM: assert (wr_cmd && wr_push && f_words == 17'd0
                                  && mem_addr == cmd_ext_addr && mem_len == cmd_len);
        end
        // STORE: the fence goes with the last push, and only with it
        if (st_run && !stall && (fence || (wr_push && last))) begin
            FENCE_WITH_LAST: assert (fence && wr_push && last);
        end
        // done exactly at the end: the len-th LOAD word, or the STORE's fence completing
        if (done || (sram_we && last) || (st_run && fence_done)) begin
            DONE_AT_END: assert (done && (f_store ? (f_fence && fence_done)
                                                  : (sram_we && last)));
        end
    end
end

// the preconditions are reachable (with stalls in the transfers)
always @(posedge clk) begin
    if (f_past_valid && !rst) begin
        C_IDLE_AFTER_DONE: cover (!f_busy && $past(done) && !$past(rst));
        C_READ_STREAM: cover (rd_cmd && !stall && cmd_len > 16'd1);
        C_LOAD_WORD: cover (sram_we && f_words == 17'd1 && $past(stall));
        C_STORE_WORD: cover (wr_push && !stall && f_words == 17'd1 && $past(stall));
        C_WRITE_STREAM: cover (wr_cmd && !stall && cmd_len > 16'd1);
        C_FENCE_WITH_LAST: cover (fence && !stall && f_words == 17'd1);
        C_LOAD_DONE: cover (done && !f_store && f_words == 17'd2);
        C_STORE_DONE: cover (done && f_store && f_words == 17'd2);
    end
end

endmodule

`default_nettype wire
