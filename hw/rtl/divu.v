`default_nettype none
`include "chip_defs.vh"
// divu: pipelined restoring unsigned divider for quotients of QUO_W bits. A division may enter
// every cycle; its result leaves QUO_W cycles later.
//
// Stage j (0 .. QUO_W-1) decides quotient bit QUO_W-1-j: it subtracts divisor << (QUO_W-1-j)
// from the partial remainder when that does not go below zero. When the quotient fits QUO_W
// bits (dividend < divisor * 2^QUO_W: every SOFTMAX division, hw/ISA.md) the result is exact:
// quotient = dividend / divisor, remainder = dividend % divisor. Outside that range (a zero
// divisor included) every stage subtracts: quotient all ones, remainder
// dividend - divisor * (2^QUO_W - 1).
//
// Timing: in_valid, dividend and divisor in cycle t; out_valid, quotient and remainder in cycle
// t + QUO_W. The divisor is not carried down the pipeline (that would cost QUO_W registers of
// DIV_W bits): it must stay unchanged from a division's entry until its result leaves, as the
// softmax unit's sum does for a whole row.
module divu #(
    parameter DIV_W = `DIV_W,    // dividend, divisor and remainder width
    parameter QUO_W = `QUO_W     // quotient width: one pipeline stage per bit
) (
    input  wire             clk,
    input  wire             rst,

    input  wire             in_valid,    // a division enters
    input  wire [DIV_W-1:0] dividend,
    input  wire [DIV_W-1:0] divisor,     // held while any division is in the pipeline

    output wire             out_valid,   // a division's result leaves
    output wire [QUO_W-1:0] quotient,
    output wire [DIV_W-1:0] remainder
);

localparam WIDE = DIV_W + QUO_W;    // holds divisor << (QUO_W - 1)

initial begin
    /* verilator coverage_off */    // parameter checks: only a bad parameter reaches their $finish
    if (DIV_W < 2 || QUO_W < 2 || QUO_W > DIV_W) begin
        $display("divu: DIV_W=%0d, QUO_W=%0d: need 2 <= QUO_W <= DIV_W", DIV_W, QUO_W);
        $finish;
    end
    /* verilator coverage_on */
end

reg [DIV_W-1:0] rem_reg [0:QUO_W-1];    // stage j's partial remainder
reg [QUO_W-1:0] quo_reg [0:QUO_W-1];    // stage j's quotient bits so far, the latest lowest
reg [QUO_W-1:0] valid_reg;              // stage j holds a division

// one restoring step on `rem` for quotient bit `bit_index`: {the bit, the remainder after it}
function [DIV_W:0] restore;
    input [DIV_W-1:0] rem;
    input [DIV_W-1:0] den;
    input integer     bit_index;
    reg   [WIDE-1:0]  part;
    begin
        part = {{QUO_W{1'b0}}, den} << bit_index;
        if ({{QUO_W{1'b0}}, rem} >= part) begin
            restore = {1'b1, rem - part[DIV_W-1:0]};    // part <= rem: it fits DIV_W bits
        end else begin
            restore = {1'b0, rem};
        end
    end
endfunction

integer j;
always @(posedge clk) begin
    if (rst) begin
        valid_reg <= {QUO_W{1'b0}};
        for (j = 0; j < QUO_W; j = j + 1) begin
            rem_reg[j] <= {DIV_W{1'b0}};
            quo_reg[j] <= {QUO_W{1'b0}};
        end
    end else if (in_valid || (valid_reg != {QUO_W{1'b0}})) begin
        // each stage shifts its bit in below the bits decided before it
        valid_reg <= {valid_reg[QUO_W-2:0], in_valid};
        {quo_reg[0], rem_reg[0]} <= {{(QUO_W-1){1'b0}}, restore(dividend, divisor, QUO_W - 1)};
        for (j = 1; j < QUO_W; j = j + 1) begin
            {quo_reg[j], rem_reg[j]} <= {quo_reg[j-1][QUO_W-2:0],
                                         restore(rem_reg[j-1], divisor, QUO_W - 1 - j)};
        end
    end
end

assign out_valid = valid_reg[QUO_W-1];
assign quotient  = quo_reg[QUO_W-1];
assign remainder = rem_reg[QUO_W-1];

endmodule

`default_nettype wire
