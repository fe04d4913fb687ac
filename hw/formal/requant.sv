`default_nettype none
// Formal properties of requant (hw/rtl/requant.v): for every int32 accumulator, int32
// multiplier and 8-bit shift, the output and the saturation flag are hw/ISA.md's
// requantization, stated plainly: p = x * mult exact (the shared multiplier specification);
// high as ISA.md words it, the overflow case, else trunc((p + nudge) / 2^31) by a signed
// division; r = high / 2^shift rounded to nearest, ties away from zero (what ISA.md says its
// mask-and-threshold formula means), on integers wide enough for every 8-bit shift; out =
// sat8(r). Proven at the chip's full widths.
`include "smul_spec.vh"

module requant_fv (
    input wire [31:0] x,
    input wire [31:0] mult,
    input wire [7:0]  shift
);

wire [7:0] y;
wire       sat;

requant dut (
    .x     (x),
    .mult  (mult),
    .shift (shift),
    .y     (y),
    .sat   (sat)
);

// step 1: the exact 64-bit product (the shared multiplier specification)
wire signed [63:0] p;
smul_spec #(.A_W(32), .B_W(32)) product (.a(x), .b(mult), .p(p));

// step 2, ISA.md's words: the single overflow case, else trunc((p + nudge) / 2^31), where a
// signed division truncates toward zero. |p| <= 2^62: the sum does not overflow 64 bits, and
// outside the overflow case the quotient is an int32 (ISA.md: "the single overflow case")
localparam signed [63:0] INT32_MIN = -(64'sd1 <<< 31);
localparam signed [63:0] INT32_MAX = (64'sd1 <<< 31) - 1;
wire               overflow = $signed(x) == INT32_MIN && $signed(mult) == INT32_MIN;
wire signed [63:0] nudge    = p >= 0 ? 64'sd1 <<< 30 : 64'sd1 - (64'sd1 <<< 30);
wire signed [63:0] quotient = (p + nudge) / (64'sd1 <<< 31);
wire signed [31:0] high     = overflow ? INT32_MAX[31:0] : quotient[31:0];

// step 3: high / 2^shift to the nearest integer, a half away from zero: the magnitude divided
// and rounded half up (plus the first bit shifted out), the sign put back. A right shift of a
// magnitude is exact in any width that holds it, so W = 33 bits (|high| <= 2^31, and its
// negation) are the unbounded integers ISA.md states shifts above 31 on
localparam W = 33;
wire [W-1:0]        magnitude = high < 0 ? -{{(W-32){high[31]}}, high} : {{(W-32){1'b0}}, high};
wire [W-1:0]        halves    = magnitude >> (shift - 1);    // for a shift above 0
wire [W-1:0]        rounded   = shift == 0 ? magnitude : (magnitude >> shift) + halves[0];
wire signed [W-1:0] r         = high < 0 ? -rounded : rounded;

// step 4: sat8
wire       below    = r < -128;
wire       above    = r > 127;
wire       spec_sat = below || above;

always @(*) begin
    // the output is sat8(r) and the flag says whether r was clamped (ISA.md step 4, ev_sat)
    SATURATION_FLAG: assert (sat == spec_sat);
    if (!spec_sat) begin
        IN_RANGE: assert (y == r[7:0]);
    end
    if (below) begin
        CLAMPED_LOW: assert (y == 8'h80);
    end
    if (above) begin
        CLAMPED_HIGH: assert (y == 8'h7F);
    end
end

// the preconditions and the corners of the rounding are reachable
wire signed [63:0] remainder31 = p & ((64'sd1 <<< 31) - 1);     // p's bits below 2^31
wire [W-1:0]       one         = 1;
wire [W-1:0]       dropped     = magnitude & ((one << shift) - one);   // shifted out in step 3
always @(*) begin
    NEGATIVE_IN_RANGE: cover (!spec_sat && r < 0);
    SATURATES_LOW: cover (below);
    SATURATES_HIGH: cover (above);
    // step 2's ties: p / 2^31 exactly halfway, below zero (where a half goes up, toward zero)
    PRODUCT_TIE_NEGATIVE: cover (p < 0 && remainder31 == (64'sd1 <<< 30) && !spec_sat);
    // the one overflow of step 2
    PRODUCT_OVERFLOWS: cover (x == 32'h8000_0000 && mult == 32'h8000_0000);
    // step 3's ties: high / 2^shift exactly halfway, below zero (rounded away, downward)
    SHIFT_TIE_NEGATIVE: cover (high < 0 && shift != 0 && shift < 32
                               && dropped == one << (shift - 1) && !spec_sat && r != 0);
    // a shift beyond the compiler's 0..31, on a non-zero high
    SHIFT_ABOVE_31: cover (shift > 31 && high != 0 && y == 0);
end

endmodule

`default_nettype wire
