`default_nettype none
`include "chip_defs.vh"
// axi_checker_harness: the cocotb toplevel of the protocol checker's negative tests: a scripted,
// deliberately broken AXI4 port (axi_bad_manager.v, the rule picked by `fault`) watched by
// axi_checker, declared to allow 2 reads outstanding. The checker's verdict is brought out.
module axi_checker_harness (
    input  wire        clk,
    input  wire        rst,
    input  wire [3:0]  fault,

    output wire [31:0] first_cycle,
    output wire [2:0]  first_channel,
    output wire [3:0]  first_rule,
    output wire [31:0] violations
);

wire [31:0] araddr, rdata, awaddr, wdata;
wire [7:0]  arlen, awlen;
wire [2:0]  arsize;
wire        arvalid, arready, rlast, rvalid, awvalid, wlast, wvalid, wready, bvalid;

axi_bad_manager u_manager (
    .clk     (clk),
    .rst     (rst),
    .fault   (fault),
    .araddr  (araddr),
    .arlen   (arlen),
    .arsize  (arsize),
    .arvalid (arvalid),
    .arready (arready),
    .rdata   (rdata),
    .rlast   (rlast),
    .rvalid  (rvalid),
    .awaddr  (awaddr),
    .awlen   (awlen),
    .awvalid (awvalid),
    .wdata   (wdata),
    .wlast   (wlast),
    .wvalid  (wvalid),
    .wready  (wready),
    .bvalid  (bvalid)
);

axi_checker #(
    .READS_MAX (2)
) u_axi_checker (
    .clk           (clk),
    .rst           (rst),
    .arid          (1'b0),
    .araddr        (araddr),
    .arlen         (arlen),
    .arsize        (arsize),
    .arburst       (2'b01),
    .arvalid       (arvalid),
    .arready       (arready),
    .rid           (1'b0),
    .rdata         (rdata),
    .rresp         (2'b00),
    .rlast         (rlast),
    .rvalid        (rvalid),
    .rready        (1'b1),
    .awid          (1'b0),
    .awaddr        (awaddr),
    .awlen         (awlen),
    .awsize        (3'd2),
    .awburst       (2'b01),
    .awvalid       (awvalid),
    .awready       (1'b1),
    .wdata         (wdata),
    .wstrb         (4'hF),
    .wlast         (wlast),
    .wvalid        (wvalid),
    .wready        (wready),
    .bid           (1'b0),
    .bresp         (2'b00),
    .bvalid        (bvalid),
    .bready        (1'b1),
    .first_cycle   (first_cycle),
    .first_channel (first_channel),
    .first_rule    (first_rule),
    .violations    (violations)
);

endmodule

`default_nettype wire
