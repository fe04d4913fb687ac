`default_nettype none
`include "chip_defs.vh"
// axi_bad_manager: a scripted AXI4 port, both sides, that breaks one protocol rule on purpose,
// for the protocol checker's negative tests (verif/tests/blocks/axi_checker_cocotb.py).
//
// Cycle 0 is the first after reset. `fault` (an AxiRule code, held through the run) picks the
// script; 0 is a clean exchange, against which the checker must stay silent:
//   cycle 2  AR of 2 beats at 0x100           cycle 3  AW of 1 beat at 0x200
//   cycle 4  W (wlast)     cycles 4, 5  R (rlast in 5)      cycle 6  B
// Each fault changes one thing; the checker must name it at this cycle and channel:
//   VALID_DROPPED      arready low in cycle 2, arvalid dropped in 3          cycle 3, AR
//   PAYLOAD_CHANGED    wready low in cycle 4, wdata changed in 5             cycle 5, W
//   BURST_SHAPE        the AR of cycle 2 with 8-byte beats                   cycle 2, AR
//   CROSSES_4K         the AW of cycle 3 at 0xFF8, 4 beats                   cycle 3, AW
//   WLAST              the AW of cycle 3 has 2 beats, W ends with 1          cycle 5, W (the pair)
//   EXTRA_B            a B in cycle 3, before any write                      cycle 3, B
//   RLAST              rlast on the first of the 2 R beats, cycle 4          cycle 4, R
//   EXTRA_R            an R beat in cycle 1, before any AR                   cycle 1, R
//   READS_OUTSTANDING  ARs in cycles 2, 3, 4 with none answered, READS_MAX 2 cycle 4, AR
module axi_bad_manager (
    input  wire        clk,
    input  wire        rst,
    input  wire [3:0]  fault,    // model.chip.rtl_defs.AxiRule: the rule to break (0: none)

    output reg  [31:0] araddr,
    output reg  [7:0]  arlen,
    output reg  [2:0]  arsize,
    output reg         arvalid,
    output reg         arready,
    output reg  [31:0] rdata,
    output reg         rlast,
    output reg         rvalid,
    output reg  [31:0] awaddr,
    output reg  [7:0]  awlen,
    output reg         awvalid,
    output reg  [31:0] wdata,
    output reg         wlast,
    output reg         wvalid,
    output reg         wready,
    output reg         bvalid
);

reg [7:0] cycle;

always @(posedge clk) begin
    if (rst) begin
        cycle <= 8'd0;
    end else if (cycle != 8'hFF) begin
        cycle <= cycle + 8'd1;
    end
end

always @* begin
    araddr  = 32'h100;
    arlen   = 8'd1;
    arsize  = 3'd2;
    arvalid = (cycle == 8'd2);
    arready = 1'b1;
    rdata   = {24'd0, cycle};
    rvalid  = (cycle == 8'd4) || (cycle == 8'd5);
    rlast   = (cycle == 8'd5);
    awaddr  = 32'h200;
    awlen   = 8'd0;
    awvalid = (cycle == 8'd3);
    wdata   = 32'h5A5A_0000;
    wvalid  = (cycle == 8'd4);
    wlast   = 1'b1;
    wready  = 1'b1;
    bvalid  = (cycle == 8'd6);
    case (fault)
        `AXI_RULE_VALID_DROPPED: begin
            arready = (cycle != 8'd2);
        end
        `AXI_RULE_PAYLOAD_CHANGED: begin
            wready = (cycle != 8'd4);
            wvalid = (cycle == 8'd4) || (cycle == 8'd5);
            wdata  = 32'h5A5A_0000 + {24'd0, cycle};
            bvalid = (cycle == 8'd7);
        end
        `AXI_RULE_BURST_SHAPE: begin
            arsize = 3'd3;
        end
        `AXI_RULE_CROSSES_4K: begin
            awaddr = 32'hFF8;
            awlen  = 8'd3;
        end
        `AXI_RULE_WLAST: begin
            awlen = 8'd1;
        end
        `AXI_RULE_EXTRA_B: begin
            bvalid = (cycle == 8'd3);
        end
        `AXI_RULE_RLAST: begin
            rlast = (cycle == 8'd4);
        end
        `AXI_RULE_EXTRA_R: begin
            rvalid = (cycle == 8'd1) || (cycle == 8'd4) || (cycle == 8'd5);
        end
        `AXI_RULE_READS_OUTSTANDING: begin
            arvalid = (cycle >= 8'd2) && (cycle <= 8'd4);
            rvalid  = 1'b0;
        end
        default: begin
        end
    endcase
end

endmodule

`default_nettype wire
