`include "axi4_rules.vh"
`default_nettype none
// Formal check of the broken managers (hw/tb/axi_bad_manager.v): the scripted port, both sides,
// with every AXI4 rule of axi4_rules.vh asserted, FAULT (a model.chip.rtl_defs.AxiRule code) fixed
// for the whole check. FAULT 0, the clean exchange, must pass; each other must fail on exactly its
// own rule, at the cycle and on the channel the bad manager's header names. Declared, as its
// simulation harness (hw/tb/axi_checker_harness.v) declares it, to allow 2 reads outstanding.
// The script has no inputs: reset is the first cycle, so the check is one trace.
module axi_bad_manager_fv #(
    parameter FAULT = 0
) (
    input wire clk
);

reg rst = 1'b1;    // reset in the first cycle only
always @(posedge clk) rst <= 1'b0;

wire [31:0] araddr, rdata, awaddr, wdata;
wire [7:0]  arlen, awlen;
wire [2:0]  arsize;
wire        arvalid, arready, rlast, rvalid, awvalid, wlast, wvalid, wready, bvalid;
wire [15:0] cycle;
wire [8:0]  reads_out, writes_open;

axi_bad_manager u_manager (
    .clk     (clk),
    .rst     (rst),
    .fault   (FAULT[3:0]),
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

axi4_rules #(
    .READS_MAX   (2),
    .SUBORDINATE (1)
) u_rules (
    .clk         (clk),
    .rst         (rst),
    .arid        (1'b0),
    .araddr      (araddr),
    .arlen       (arlen),
    .arsize      (arsize),
    .arburst     (2'b01),
    .arvalid     (arvalid),
    .arready     (arready),
    .rid         (1'b0),
    .rdata       (rdata),
    .rresp       (2'b00),
    .rlast       (rlast),
    .rvalid      (rvalid),
    .rready      (1'b1),
    .awid        (1'b0),
    .awaddr      (awaddr),
    .awlen       (awlen),
    .awsize      (3'd2),
    .awburst     (2'b01),
    .awvalid     (awvalid),
    .awready     (1'b1),
    .wdata       (wdata),
    .wstrb       (4'hF),
    .wlast       (wlast),
    .wvalid      (wvalid),
    .wready      (wready),
    .bid         (1'b0),
    .bresp       (2'b00),
    .bvalid      (bvalid),
    .bready      (1'b1),
    .cycle       (cycle),
    .reads_out   (reads_out),
    .writes_open (writes_open)
);

endmodule

`default_nettype wire
