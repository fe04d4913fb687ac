`default_nettype none
`include "chip_defs.vh"
// dma_harness: the cocotb toplevel of the DMA block test: dma wired to ext_mem and sram.
//
// A test backdoor-writes u_mem.mem[i] (external memory) or u_sram.mem[i] (SRAM), raises
// cmd_load or cmd_store for one cycle with the fields, counts the cycles until done and reads
// the destination back through the backdoor.
module dma_harness #(
    parameter SRAM_WORDS = `SRAM_WORDS_DEFAULT,    // SRAM words
    parameter EXT_WORDS  = `EXT_WORDS_DEFAULT,     // external memory words
    parameter EXT_LAT    = `EXT_LAT_DEFAULT        // external read latency
) (
    input  wire        clk,
    input  wire        rst,

    input  wire        cmd_load,
    input  wire        cmd_store,
    input  wire [15:0] cmd_ext_addr,
    input  wire [15:0] cmd_sram_addr,
    input  wire [15:0] cmd_len,
    output wire        done
);

localparam SRAM_AW = $clog2(SRAM_WORDS);

wire               mem_req, mem_we, mem_rvalid;
wire [15:0]        mem_addr;
wire [31:0]        mem_wdata, mem_rdata;
wire [SRAM_AW-1:0] sram_raddr, sram_waddr;
wire [31:0]        sram_rdata, sram_wdata, sram_rdata_b;
wire               sram_we;

dma #(
    .SRAM_AW (SRAM_AW)
) u_dma (
    .clk           (clk),
    .rst           (rst),
    .cmd_load      (cmd_load),
    .cmd_store     (cmd_store),
    .cmd_ext_addr  (cmd_ext_addr),
    .cmd_sram_addr (cmd_sram_addr),
    .cmd_len       (cmd_len),
    .done          (done),
    .mem_req       (mem_req),
    .mem_we        (mem_we),
    .mem_addr      (mem_addr),
    .mem_wdata     (mem_wdata),
    .mem_rvalid    (mem_rvalid),
    .mem_rdata     (mem_rdata),
    .sram_raddr    (sram_raddr),
    .sram_rdata    (sram_rdata),
    .sram_we       (sram_we),
    .sram_waddr    (sram_waddr),
    .sram_wdata    (sram_wdata)
);

ext_mem #(
    .WORDS (EXT_WORDS),
    .LAT   (EXT_LAT)
) u_mem (
    .clk    (clk),
    .rst    (rst),
    .req    (mem_req),
    .we     (mem_we),
    .addr   (mem_addr),
    .wdata  (mem_wdata),
    .rvalid (mem_rvalid),
    .rdata  (mem_rdata)
);

sram #(
    .SRAM_WORDS (SRAM_WORDS)
) u_sram (
    .clk       (clk),
    .rd_a_addr (sram_raddr),
    .rd_a_data (sram_rdata),
    .rd_b_addr ({SRAM_AW{1'b0}}),
    .rd_b_data (sram_rdata_b),
    .wr_en     (sram_we),
    .wr_addr   (sram_waddr),
    .wr_data   (sram_wdata)
);

wire unused_dma_harness = &{1'b0, sram_rdata_b};

endmodule

`default_nettype wire
