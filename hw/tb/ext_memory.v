`default_nettype none
`include "chip_defs.vh"
// ext_memory: a DMA block harness's external memory behind the chip's memory port: the memory
// interface unit (mem_if) on an axi_ram (the ideal memory unless plusargs say otherwise), with
// the protocol checker (axi_checker) on the AXI4 port between them, wired as chip_harness wires
// the chip's port. dma_harness and pdma_harness put their unit on its unit side.
//
// The memory's words are u_mem.mem[i] (axi_ram.v); every word it stores is shown on w_event /
// w_event_addr / w_event_data for the harness's write log. axi_violations is 0 while the port
// kept every rule (axi_checker.v); stall is the memory interface unit's (a frozen cycle).
module ext_memory #(
    parameter EXT_WORDS = `EXT_WORDS_DEFAULT,    // external memory words
    parameter EXT_LAT   = `EXT_LAT_DEFAULT       // the ideal memory's read latency
) (
    input  wire        clk,
    input  wire        rst,

    // the memory interface unit's unit side (mem_if.v): one stream address and length for
    // reads and writes, as a DMA unit presents them
    output wire        stall,
    output wire        bus_err,
    input  wire [15:0] addr,
    input  wire [15:0] len,
    input  wire        rd_cmd,
    output wire        rd_valid,
    output wire [31:0] rd_data,
    input  wire        wr_cmd,
    input  wire        wr_push,
    input  wire [31:0] wr_data,
    input  wire        fence,
    output wire        fence_done,

    // a word the memory stores (axi_ram.v)
    output wire        w_event,
    output wire [15:0] w_event_addr,
    output wire [31:0] w_event_data,

    // the AXI4 port's protocol check (axi_checker.v) and the memory's stall counts (axi_ram.v)
    output wire [31:0] axi_violations,
    output wire [31:0] axi_first_cycle,
    output wire [2:0]  axi_first_channel,
    output wire [3:0]  axi_first_rule,
    output wire [6*32-1:0] mem_stalls
);

// the AXI4 port between the memory interface unit and the memory
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

mem_if #(
    .EXT_LAT (EXT_LAT)
) u_mem_if (
    .clk           (clk),
    .rst           (rst),
    .clear         (1'b0),
    .stall         (stall),
    .bus_err       (bus_err),
    .rd_cmd        (rd_cmd),
    .rd_addr       (addr),
    .rd_len        (len),
    .rd_valid      (rd_valid),
    .rd_data       (rd_data),
    .wr_cmd        (wr_cmd),
    .wr_addr       (addr),
    .wr_len        (len),
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

endmodule

`default_nettype wire
