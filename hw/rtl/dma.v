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
// that the SRAM's registered read port still holds the word a STORE is about to push. The command fields are held stable by the controller while the transfer
// runs. Cycle 0 is the cycle after the one-cycle `cmd_load` / `cmd_store`.
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

reg        active_reg;    // a transfer is running
reg        store_reg;     // it is a STORE (else a LOAD)
reg        first_reg;     // cycle 0 of the transfer
reg [15:0] issue_reg;     // STORE: SRAM reads issued so far
reg [15:0] resp_reg;      // words written so far (SRAM for LOAD, pushed for STORE)
reg        pend_reg;      // STORE: the SRAM word read last cycle is on sram_rdata
reg        fenced_reg;    // STORE: every word pushed, waiting for the fence
reg [SRAM_AW-1:0] raddr_reg;    // the SRAM read address presented in the cycle before

wire issuing  = active_reg && store_reg && (issue_reg != cmd_len);
wire load_rsp = active_reg && !store_reg && rd_valid;       // a LOAD word arrives
wire st_push  = active_reg && store_reg && pend_reg;        // a STORE word leaves
wire last     = (resp_reg == cmd_len - 16'd1);

// the controller has checked that every address fits its memory; the SRAM sums are one bit
// wider so that the bits above the SRAM address always exist, whatever SRAM_AW is
wire [16:0] sram_rd_addr = {1'b0, cmd_sram_addr} + {1'b0, issue_reg};
wire [16:0] sram_wr_addr = {1'b0, cmd_sram_addr} + {1'b0, resp_reg};

assign done       = (load_rsp && last) || (active_reg && store_reg && fenced_reg && fence_done);

assign mem_addr   = cmd_ext_addr;
assign mem_len    = cmd_len;
assign rd_cmd     = active_reg && !store_reg && first_reg;
assign wr_cmd     = st_push && (resp_reg == 16'd0);
assign wr_push    = st_push;
assign wr_data    = sram_rdata;
assign fence      = st_push && last;

assign sram_raddr = stall ? raddr_reg : sram_rd_addr[SRAM_AW-1:0];

always @(posedge clk) begin
    raddr_reg <= sram_raddr;
end
assign sram_we    = load_rsp;
assign sram_waddr = sram_wr_addr[SRAM_AW-1:0];
assign sram_wdata = rd_data;

always @(posedge clk) begin
    if (rst) begin
        active_reg <= 1'b0;
        store_reg  <= 1'b0;
        first_reg  <= 1'b0;
        issue_reg  <= 16'd0;
        resp_reg   <= 16'd0;
        pend_reg   <= 1'b0;
        fenced_reg <= 1'b0;
    end else if (!stall) begin
        if (!active_reg) begin
            active_reg <= cmd_load || cmd_store;
            store_reg  <= cmd_store;
            first_reg  <= 1'b1;
            issue_reg  <= 16'd0;
            resp_reg   <= 16'd0;
            pend_reg   <= 1'b0;
            fenced_reg <= 1'b0;
        end else begin
            first_reg <= 1'b0;
            if (issuing) begin
                issue_reg <= issue_reg + 16'd1;
            end
            if (load_rsp || st_push) begin
                resp_reg <= resp_reg + 16'd1;
            end
            if (fence) begin
                fenced_reg <= 1'b1;
            end
            pend_reg <= issuing;
            if (done) begin
                active_reg <= 1'b0;
            end
        end
    end
end

wire unused_dma = &{1'b0, sram_rd_addr[16:SRAM_AW], sram_wr_addr[16:SRAM_AW]};

endmodule

`default_nettype wire
