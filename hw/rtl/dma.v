`default_nettype none
// dma: LOAD (external memory -> SRAM) and STORE (SRAM -> external memory), one word a cycle,
// through the memory interface unit (mem_if.v), which keeps the ideal memory's schedule
// (hw/ISA.md, "The memory interface unit"); the DMA counts no latency of its own.
//
// LOAD : cycle 0 commands one read stream of len words from ext[a]; each word is written to
//        sram[b + i] in the cycle it arrives. `done` is high in the cycle of the last word:
//        len + EXT_LAT + 2 cycles on the ideal memory.
// STORE: reads sram[b + i] in cycle i and pushes it into a write stream in cycle i + 1 (the
//        stream's command goes with the first push, a fence with the last). `done` is high in
//        the cycle the fence completes: len + 4 cycles on the ideal memory.
//
// In a cycle with `stall` high nothing changes (the memory interface unit ignores what the DMA
// presents in it), and the DMA presents the SRAM read address of the cycle before again, so
// that the SRAM's registered read port still holds the word a STORE is about to push. The
// command fields are held stable by the controller while the transfer runs. Cycle 0 is the
// cycle after the one-cycle `cmd_load` / `cmd_store`.
module dma #(
    parameter SRAM_AW = 12    // SRAM address width
) (
    input  wire               clk,
    input  wire               rst,
    input  wire               stall,          // the memory interface unit freezes this cycle

    // command
    input  wire               cmd_load,       // one cycle: start a LOAD
    input  wire               cmd_store,      // one cycle: start a STORE
    input  wire [15:0]        cmd_ext_addr,   // a: external address
    input  wire [15:0]        cmd_sram_addr,  // b: SRAM address
    input  wire [15:0]        cmd_len,        // words to move, >= 1
    output wire               done,           // high in the last cycle of the transfer

    // the memory interface unit
    output wire [15:0]        mem_addr,       // the stream's address and length: a, len
    output wire [15:0]        mem_len,
    output wire               rd_cmd,         // LOAD: the read stream, in cycle 0
    input  wire               rd_valid,
    input  wire [31:0]        rd_data,
    output wire               wr_cmd,         // STORE: the write stream, with the first push
    output wire               wr_push,        // STORE: a word leaves (the event counted)
    output wire [31:0]        wr_data,
    output wire               fence,          // STORE: with the last push
    input  wire               fence_done,

    // SRAM
    output wire [SRAM_AW-1:0] sram_raddr,
    input  wire [31:0]        sram_rdata,
    output wire               sram_we,
    output wire [SRAM_AW-1:0] sram_waddr,
    output wire [31:0]        sram_wdata
);

localparam [2:0] S_IDLE     = 3'd0;
localparam [2:0] S_LOAD_CMD = 3'd1;    // LOAD, cycle 0: the read stream is commanded
localparam [2:0] S_LOAD     = 3'd2;    // LOAD: the words arrive, each written to the SRAM
localparam [2:0] S_STORE    = 3'd3;    // STORE: an SRAM read and a push a cycle
localparam [2:0] S_FENCE    = 3'd4;    // STORE: every word pushed, waiting for the fence

// ---------------------------------------------------------------------------------------------
// state

reg [2:0]         state_reg, state_next;
reg [15:0]        issue_reg, issue_next;    // STORE: SRAM reads issued so far
reg [15:0]        resp_reg,  resp_next;     // words written so far (LOAD: SRAM; STORE: pushed)
reg               pend_reg,  pend_next;     // STORE: the word read last cycle is on sram_rdata
reg [SRAM_AW-1:0] raddr_reg;                // the SRAM read address presented the cycle before

wire starting = cmd_load || cmd_store;
wire issuing  = (state_reg == S_STORE) && (issue_reg != cmd_len);
wire load_rsp = (state_reg == S_LOAD) && rd_valid;       // a LOAD word arrives
wire st_push  = (state_reg == S_STORE) && pend_reg;      // a STORE word leaves
wire last     = (resp_reg == cmd_len - 16'd1);

// the controller has checked that every address fits its memory; the SRAM sums are one bit
// wider so that the bits above the SRAM address always exist, whatever SRAM_AW is
wire [16:0] sram_rd_addr = {1'b0, cmd_sram_addr} + {1'b0, issue_reg};
wire [16:0] sram_wr_addr = {1'b0, cmd_sram_addr} + {1'b0, resp_reg};

assign done       = (load_rsp && last) || ((state_reg == S_FENCE) && fence_done);

assign mem_addr   = cmd_ext_addr;
assign mem_len    = cmd_len;
assign rd_cmd     = (state_reg == S_LOAD_CMD);
assign wr_cmd     = st_push && (resp_reg == 16'd0);
assign wr_push    = st_push;
assign wr_data    = sram_rdata;
assign fence      = st_push && last;

assign sram_raddr = stall ? raddr_reg : sram_rd_addr[SRAM_AW-1:0];
assign sram_we    = load_rsp;
assign sram_waddr = sram_wr_addr[SRAM_AW-1:0];
assign sram_wdata = rd_data;

always @* begin
    state_next = state_reg;
    issue_next = issue_reg;
    resp_next  = resp_reg;
    pend_next  = issuing;

    if (issuing) begin
        issue_next = issue_reg + 16'd1;
    end
    if (load_rsp || st_push) begin
        resp_next = resp_reg + 16'd1;
    end

    case (state_reg)
        S_IDLE: begin
            if (starting) begin
                state_next = cmd_store ? S_STORE : S_LOAD_CMD;
                issue_next = 16'd0;
                resp_next  = 16'd0;
            end
        end
        S_LOAD_CMD: begin
            state_next = S_LOAD;
        end
        S_LOAD: begin
            if (done) begin
                state_next = S_IDLE;
            end
        end
        S_STORE: begin
            if (fence) begin
                state_next = S_FENCE;
            end
        end
        S_FENCE: begin
            if (done) begin
                state_next = S_IDLE;
            end
        end
        /* verilator coverage_off */    // unreachable: state_reg holds only the states above
        default: begin
            state_next = S_IDLE;
        end
        /* verilator coverage_on */
    endcase
end

// (a stalled cycle changes nothing; an idle one without a command neither: on Icarus every
// register copied costs, and the DMA is idle most cycles)
always @(posedge clk) begin
    raddr_reg <= sram_raddr;    // every cycle, stalled or not
    if (rst) begin
        state_reg <= S_IDLE;
        issue_reg <= 16'd0;
        resp_reg  <= 16'd0;
        pend_reg  <= 1'b0;
    end else if (!stall && (state_reg != S_IDLE || starting)) begin
        state_reg <= state_next;
        issue_reg <= issue_next;
        resp_reg  <= resp_next;
        pend_reg  <= pend_next;
    end
end

wire unused_dma = &{1'b0, sram_rd_addr[16:SRAM_AW], sram_wr_addr[16:SRAM_AW]};

`ifdef FORMAL    // the formal flow's invariants of this unit's registers (hw/formal)
`include "dma_invariants.vh"
`endif

endmodule

`default_nettype wire
