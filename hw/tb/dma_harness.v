`default_nettype none
`include "chip_defs.vh"
// dma_harness: the cocotb toplevel of the DMA block test: dma wired to the memory interface unit
// (mem_if) on an axi_ram (the ideal memory unless plusargs say otherwise), with the protocol
// checker on the AXI port, and to an sram.
//
// A test backdoor-writes u_mem.mem[i] (external memory) or u_sram.mem[i] (SRAM), raises
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
wire [0:0]   axi_arid;
wire [31:0]  axi_araddr;
wire [7:0]   axi_arlen;
wire [2:0]   axi_arsize;
wire [1:0]   axi_arburst;
wire         axi_arvalid;
wire         axi_arready;
wire [0:0]   axi_rid;
wire [31:0]  axi_rdata;
wire [1:0]   axi_rresp;
wire         axi_rlast;
wire         axi_rvalid;
wire         axi_rready;
wire [0:0]   axi_awid;
wire [31:0]  axi_awaddr;
wire [7:0]   axi_awlen;
wire [2:0]   axi_awsize;
wire [1:0]   axi_awburst;
wire         axi_awvalid;
wire         axi_awready;
wire [31:0]  axi_wdata;
wire [3:0]   axi_wstrb;
wire         axi_wlast;
wire         axi_wvalid;
wire         axi_wready;
wire [0:0]   axi_bid;
wire [1:0]   axi_bresp;
wire         axi_bvalid;
wire         axi_bready;

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

mem_if #(
    .EXT_LAT (EXT_LAT)
) u_mem_if (
    .clk           (clk),
    .rst           (rst),
    .clear         (1'b0),
    .stall         (stall),
    .bus_err       (bus_err),
    .rd_cmd        (rd_cmd),
    .rd_addr       (stream_addr),
    .rd_len        (stream_len),
    .rd_valid      (rd_valid),
    .rd_data       (rd_data),
    .wr_cmd        (wr_cmd),
    .wr_addr       (stream_addr),
    .wr_len        (stream_len),
    .wr_push       (wr_push),
    .wr_data       (wr_data),
    .fence         (fence),
    .fence_done    (fence_done),
    .m_axi_arid    (axi_arid),
    .m_axi_araddr  (axi_araddr),
    .m_axi_arlen   (axi_arlen),
    .m_axi_arsize  (axi_arsize),
    .m_axi_arburst (axi_arburst),
    .m_axi_arvalid (axi_arvalid),
    .m_axi_arready (axi_arready),
    .m_axi_rid     (axi_rid),
    .m_axi_rdata   (axi_rdata),
    .m_axi_rresp   (axi_rresp),
    .m_axi_rlast   (axi_rlast),
    .m_axi_rvalid  (axi_rvalid),
    .m_axi_rready  (axi_rready),
    .m_axi_awid    (axi_awid),
    .m_axi_awaddr  (axi_awaddr),
    .m_axi_awlen   (axi_awlen),
    .m_axi_awsize  (axi_awsize),
    .m_axi_awburst (axi_awburst),
    .m_axi_awvalid (axi_awvalid),
    .m_axi_awready (axi_awready),
    .m_axi_wdata   (axi_wdata),
    .m_axi_wstrb   (axi_wstrb),
    .m_axi_wlast   (axi_wlast),
    .m_axi_wvalid  (axi_wvalid),
    .m_axi_wready  (axi_wready),
    .m_axi_bid     (axi_bid),
    .m_axi_bresp   (axi_bresp),
    .m_axi_bvalid  (axi_bvalid),
    .m_axi_bready  (axi_bready)
);

axi_ram #(
    .WORDS (EXT_WORDS),
    .LAT   (EXT_LAT)
) u_mem (
    .clk           (clk),
    .rst           (rst),
    .s_axi_arid    (axi_arid),
    .s_axi_araddr  (axi_araddr),
    .s_axi_arlen   (axi_arlen),
    .s_axi_arsize  (axi_arsize),
    .s_axi_arburst (axi_arburst),
    .s_axi_arvalid (axi_arvalid),
    .s_axi_arready (axi_arready),
    .s_axi_rid     (axi_rid),
    .s_axi_rdata   (axi_rdata),
    .s_axi_rresp   (axi_rresp),
    .s_axi_rlast   (axi_rlast),
    .s_axi_rvalid  (axi_rvalid),
    .s_axi_rready  (axi_rready),
    .s_axi_awid    (axi_awid),
    .s_axi_awaddr  (axi_awaddr),
    .s_axi_awlen   (axi_awlen),
    .s_axi_awsize  (axi_awsize),
    .s_axi_awburst (axi_awburst),
    .s_axi_awvalid (axi_awvalid),
    .s_axi_awready (axi_awready),
    .s_axi_wdata   (axi_wdata),
    .s_axi_wstrb   (axi_wstrb),
    .s_axi_wlast   (axi_wlast),
    .s_axi_wvalid  (axi_wvalid),
    .s_axi_wready  (axi_wready),
    .s_axi_bid     (axi_bid),
    .s_axi_bresp   (axi_bresp),
    .s_axi_bvalid  (axi_bvalid),
    .s_axi_bready  (axi_bready),
    .w_event       (w_event),
    .w_event_addr  (w_event_addr),
    .w_event_data  (w_event_data),
    .stall_counts  (mem_stalls)
);

axi_checker u_axi_checker (
    .clk           (clk),
    .rst           (rst),
    .arid          (axi_arid),
    .araddr        (axi_araddr),
    .arlen         (axi_arlen),
    .arsize        (axi_arsize),
    .arburst       (axi_arburst),
    .arvalid       (axi_arvalid),
    .arready       (axi_arready),
    .rid           (axi_rid),
    .rdata         (axi_rdata),
    .rresp         (axi_rresp),
    .rlast         (axi_rlast),
    .rvalid        (axi_rvalid),
    .rready        (axi_rready),
    .awid          (axi_awid),
    .awaddr        (axi_awaddr),
    .awlen         (axi_awlen),
    .awsize        (axi_awsize),
    .awburst       (axi_awburst),
    .awvalid       (axi_awvalid),
    .awready       (axi_awready),
    .wdata         (axi_wdata),
    .wstrb         (axi_wstrb),
    .wlast         (axi_wlast),
    .wvalid        (axi_wvalid),
    .wready        (axi_wready),
    .bid           (axi_bid),
    .bresp         (axi_bresp),
    .bvalid        (axi_bvalid),
    .bready        (axi_bready),
    .first_cycle   (axi_first_cycle),
    .first_channel (axi_first_channel),
    .first_rule    (axi_first_rule),
    .violations    (axi_violations)
);

wire sram_write = sram_we && !stall;    // a stalled cycle writes nothing

sram #(
    .SRAM_WORDS (SRAM_WORDS)
) u_sram (
    .clk       (clk),
    .rd_a_addr (sram_raddr),
    .rd_a_data (sram_rdata),
    .rd_b_addr ({SRAM_AW{1'b0}}),
    .rd_b_data (sram_rdata_b),
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

wire unused_dma_harness = &{1'b0, sram_rdata_b};

endmodule

`default_nettype wire
