`default_nettype none
// dma: LOAD (external memory -> SRAM) and STORE (SRAM -> external memory), one word a cycle.
//
// LOAD : reads ext[a + i] in cycles 0 .. len-1; each word arrives EXT_LAT cycles later and is
//        written to sram[b + i] in the cycle it arrives. `done` is high in the cycle of the last
//        word: len + EXT_LAT cycles in all.
// STORE: reads sram[b + i] in cycle i and writes it to ext[a + i] in cycle i + 1. `done` is
//        high in the cycle of the last write: len + 1 cycles in all.
//
// The command fields are held stable by the controller while the transfer runs. Cycle 0 is the
// cycle after the one-cycle `cmd_load` / `cmd_store`.
module dma #(
    parameter SRAM_AW = 12    // SRAM address width
) (
    input  wire               clk,
    input  wire               rst,

    // command
    input  wire               cmd_load,       // one cycle: start a LOAD
    input  wire               cmd_store,      // one cycle: start a STORE
    input  wire [15:0]        cmd_ext_addr,   // a: external address
    input  wire [15:0]        cmd_sram_addr,  // b: SRAM address
    input  wire [15:0]        cmd_len,        // words to move, >= 1
    output wire               done,           // high in the last cycle of the transfer

    // external memory
    output wire               mem_req,
    output wire               mem_we,
    output wire [15:0]        mem_addr,
    output wire [31:0]        mem_wdata,
    input  wire               mem_rvalid,
    input  wire [31:0]        mem_rdata,

    // SRAM
    output wire [SRAM_AW-1:0] sram_raddr,
    input  wire [31:0]        sram_rdata,
    output wire               sram_we,
    output wire [SRAM_AW-1:0] sram_waddr,
    output wire [31:0]        sram_wdata
);

reg        active_reg;    // a transfer is running
reg        store_reg;     // it is a STORE (else a LOAD)
reg [15:0] issue_reg;     // reads issued so far (external for LOAD, SRAM for STORE)
reg [15:0] resp_reg;      // words written so far (SRAM for LOAD, external for STORE)
reg        pend_reg;      // STORE: the SRAM word read last cycle is on sram_rdata

wire issuing  = active_reg && (issue_reg != cmd_len);
wire load_rsp = active_reg && !store_reg && mem_rvalid;      // a LOAD word arrives
wire st_write = active_reg && store_reg && pend_reg;         // a STORE word leaves
wire writing  = load_rsp || st_write;
wire last     = (resp_reg == cmd_len - 16'd1);

// the controller has checked that every address fits its memory; the SRAM sums are one bit
// wider so that the bits above the SRAM address always exist, whatever SRAM_AW is
wire [15:0] ext_rd_addr  = cmd_ext_addr + issue_reg;
wire [15:0] ext_wr_addr  = cmd_ext_addr + resp_reg;
wire [16:0] sram_rd_addr = {1'b0, cmd_sram_addr} + {1'b0, issue_reg};
wire [16:0] sram_wr_addr = {1'b0, cmd_sram_addr} + {1'b0, resp_reg};

assign done       = writing && last;

assign mem_req    = (issuing && !store_reg) || st_write;
assign mem_we     = st_write;
assign mem_addr   = st_write ? ext_wr_addr : ext_rd_addr;
assign mem_wdata  = sram_rdata;

assign sram_raddr = sram_rd_addr[SRAM_AW-1:0];
assign sram_we    = load_rsp;
assign sram_waddr = sram_wr_addr[SRAM_AW-1:0];
assign sram_wdata = mem_rdata;

always @(posedge clk) begin
    if (rst) begin
        active_reg <= 1'b0;
        store_reg  <= 1'b0;
        issue_reg  <= 16'd0;
        resp_reg   <= 16'd0;
        pend_reg   <= 1'b0;
    end else if (!active_reg) begin
        active_reg <= cmd_load || cmd_store;
        store_reg  <= cmd_store;
        issue_reg  <= 16'd0;
        resp_reg   <= 16'd0;
        pend_reg   <= 1'b0;
    end else begin
        if (issuing) begin
            issue_reg <= issue_reg + 16'd1;
        end
        if (writing) begin
            resp_reg <= resp_reg + 16'd1;
        end
        pend_reg <= store_reg && issuing;
        if (done) begin
            active_reg <= 1'b0;
        end
    end
end

wire unused_dma = &{1'b0, sram_rd_addr[16:SRAM_AW], sram_wr_addr[16:SRAM_AW]};

endmodule

`default_nettype wire
