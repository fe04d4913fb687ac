`default_nettype none
`include "chip_defs.vh"
// dma_harness: the cocotb toplevel of the DMA block test: dma wired to the external memory
// (ext_memory.v: the memory interface unit on an axi_ram, the ideal memory unless plusargs say
// otherwise, with the protocol checker on the AXI port) and to an sram.
//
// A test backdoor-writes u_ext.u_mem.mem[i] (external memory) or u_sram.mem[i] (SRAM), raises
// cmd_load or cmd_store for one cycle with the fields, counts the cycles until done and reads
// the destination back through the backdoor. The harness logs every word written to either
// memory with its cycle since the command (u_sram_writes, u_ext_writes: write_log.v).
// axi_violations is 0 while the port kept every rule (axi_checker.v); stall is the memory
// interface unit's (a frozen cycle).
module dma_harness #(
    parameter SRAM_WORDS = `SRAM_WORDS_DEFAULT,    // SRAM words
    parameter EXT_WORDS  = `EXT_WORDS_DEFAULT,     // external memory words
    parameter EXT_LAT    = `EXT_LAT_DEFAULT        // the ideal memory's read latency
) (
    input  wire        clk,
    input  wire        rst,

    input  wire        cmd_load,
    input  wire        cmd_store,
    input  wire [15:0] cmd_ext_addr,
    input  wire [15:0] cmd_sram_addr,
    input  wire [15:0] cmd_len,
    output wire        done,
    output wire        stall,
    output wire        bus_err,

    output wire [31:0] axi_violations,
    output wire [31:0] axi_first_cycle,
    output wire [2:0]  axi_first_channel,
    output wire [3:0]  axi_first_rule,
    output wire [6*32-1:0] mem_stalls
);

localparam SRAM_AW = $clog2(SRAM_WORDS);

wire [15:0]        stream_addr, stream_len;
wire               rd_cmd, rd_valid, wr_cmd, wr_push, fence, fence_done;
wire [31:0]        rd_data, wr_data;
wire [SRAM_AW-1:0] sram_raddr, sram_waddr;
wire [31:0]        sram_rdata, sram_wdata, sram_rdata_b;
wire               sram_we;
wire               starting = cmd_load || cmd_store;

dma #(
    .SRAM_AW (SRAM_AW)
) u_dma (
    .clk           (clk),
    .rst           (rst),
    .stall         (stall),
    .cmd_load      (cmd_load),
    .cmd_store     (cmd_store),
    .cmd_ext_addr  (cmd_ext_addr),
    .cmd_sram_addr (cmd_sram_addr),
    .cmd_len       (cmd_len),
    .done          (done),
    .mem_addr      (stream_addr),
    .mem_len       (stream_len),
    .rd_cmd        (rd_cmd),
    .rd_valid      (rd_valid),
    .rd_data       (rd_data),
    .wr_cmd        (wr_cmd),
    .wr_push       (wr_push),
    .wr_data       (wr_data),
    .fence         (fence),
    .fence_done    (fence_done),
    .sram_raddr    (sram_raddr),
    .sram_rdata    (sram_rdata),
    .sram_we       (sram_we),
    .sram_waddr    (sram_waddr),
    .sram_wdata    (sram_wdata)
);

wire        w_event;
wire [15:0] w_event_addr;
wire [31:0] w_event_data;

ext_memory #(
    .EXT_WORDS (EXT_WORDS),
    .EXT_LAT   (EXT_LAT)
) u_ext (
    .clk               (clk),
    .rst               (rst),
    .stall             (stall),
    .bus_err           (bus_err),
    .addr              (stream_addr),
    .len               (stream_len),
    .rd_cmd            (rd_cmd),
    .rd_valid          (rd_valid),
    .rd_data           (rd_data),
    .wr_cmd            (wr_cmd),
    .wr_push           (wr_push),
    .wr_data           (wr_data),
    .fence             (fence),
    .fence_done        (fence_done),
    .w_event           (w_event),
    .w_event_addr      (w_event_addr),
    .w_event_data      (w_event_data),
    .axi_violations    (axi_violations),
    .axi_first_cycle   (axi_first_cycle),
    .axi_first_channel (axi_first_channel),
    .axi_first_rule    (axi_first_rule),
    .mem_stalls        (mem_stalls)
);

wire sram_write = sram_we && !stall;    // a stalled cycle writes nothing

wire               sram_a_bad, sram_b_bad;    // the parity checks' (no fault here)
sram #(
    .SRAM_WORDS (SRAM_WORDS)
) u_sram (
    .clk       (clk),
    .rd_a_addr (sram_raddr),
    .rd_a_data (sram_rdata),
    .rd_a_bad  (sram_a_bad),
    .rd_b_addr ({SRAM_AW{1'b0}}),
    .rd_b_data (sram_rdata_b),
    .rd_b_bad  (sram_b_bad),
    .wr_en     (sram_write),
    .wr_addr   (sram_waddr),
    .wr_data   (sram_wdata)
);

// every word written, with its cycle since the command (write_log.v): to the SRAM as it stores
// it, and to the external memory as axi_ram.v stores it
write_log #(
    .ADDR_W (SRAM_AW),
    .DEPTH  (SRAM_WORDS)    // a command writes at most SRAM_WORDS words to either memory
) u_sram_writes (
    .clk   (clk),
    .rst   (rst),
    .start (starting),
    .we    (sram_write),
    .addr  (sram_waddr),
    .data  (sram_wdata)
);

write_log #(
    .ADDR_W (16),
    .DEPTH  (SRAM_WORDS)
) u_ext_writes (
    .clk   (clk),
    .rst   (rst),
    .start (starting),
    .we    (w_event),
    .addr  (w_event_addr),
    .data  (w_event_data)
);

wire unused_dma_harness = &{1'b0, sram_rdata_b, sram_a_bad, sram_b_bad};

endmodule

`default_nettype wire
