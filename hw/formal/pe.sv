`default_nettype none
// Formal properties of pe (hw/rtl/pe.v): after a reset, the accumulator is the int32 sum
// (wrapping modulo 2^32) of the products a_in * b_in (int8 x int8, the shared multiplier
// specification) of every enabled beat since the last reset or clear, and a_out, b_out are the
// operands of the last enabled beat (zero after a reset or clear); a beat without `en` changes
// nothing. Proven at the chip's widths, for every operand sequence.
`include "smul_spec.vh"

module pe_fv (
    input wire       clk,
    input wire       rst,
    input wire       clear,
    input wire       en,
    input wire [7:0] a_in,
    input wire [7:0] b_in
);

wire [7:0]  a_out;
wire [7:0]  b_out;
wire [31:0] acc;

pe dut (
    .clk   (clk),
    .rst   (rst),
    .clear (clear),
    .en    (en),
    .a_in  (a_in),
    .b_in  (b_in),
    .a_out (a_out),
    .b_out (b_out),
    .acc   (acc)
);

// the specification: the running sum and the last operands, kept beside the PE
wire signed [15:0] product;
smul_spec #(.A_W(8), .B_W(8)) multiply (.a(a_in), .b(b_in), .p(product));

reg signed [31:0] f_sum;
reg        [7:0]  f_a, f_b;
always @(posedge clk) begin
    if (rst || clear) begin
        f_sum <= 0;
        f_a   <= 0;
        f_b   <= 0;
    end else if (en) begin
        f_sum <= f_sum + product;    // a signed 16-bit product, sign-extended into the sum
        f_a   <= a_in;
        f_b   <= b_in;
    end
end

reg f_past_valid = 1'b0;
always @(posedge clk) f_past_valid <= 1'b1;

// the contract: a reset first
always @(*) if (!f_past_valid) assume (rst);

always @(posedge clk) begin
    if (f_past_valid) begin
        // acc is the sum of the enabled beats' products since the last reset or clear
        ACCUMULATOR: assert (acc == f_sum);
        // the operands move on one beat later, right and down
        A_FORWARDED: assert (a_out == f_a);
        B_FORWARDED: assert (b_out == f_b);
    end
end

// the preconditions are reachable: a negative product accumulated, the largest product
// (-128 * -128, whose sign needs the 16th bit), a clear of a non-zero sum that wins over `en`,
// and a beat held by !en. (A sum that wraps past int32 takes 2^17 beats: k-induction covers it,
// a bounded cover cannot reach it)
always @(posedge clk) begin
    if (f_past_valid && !$past(rst)) begin
        NEGATIVE_PRODUCT: cover ($past(en && !clear && product < 0) && acc != 0);
        LARGEST_PRODUCT: cover ($past(en && !clear && a_in == 8'h80 && b_in == 8'h80)
                                && acc != 0);
        CLEARED: cover ($past(clear && en && product != 0 && acc != 0) && acc == 0);
        HELD: cover ($past(!en && !clear) && $past(acc) != 0 && $stable(acc));
    end
end

endmodule

`default_nettype wire
