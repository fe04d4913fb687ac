`default_nettype none
// requant: an int32 accumulator to int8, exactly as hw/ISA.md defines it (combinational).
//
//   1. p    = x * mult, exact in 64 bits
//   2. high = 2^31 - 1                                 when x == mult == -2^31,
//             trunc((p + nudge) / 2^31)                otherwise, nudge = 2^30 or 1 - 2^30
//   3. r    = (high >>> shift) + (rem > threshold),    mask = 2^shift - 1, rem = high & mask,
//                                                      threshold = (mask >> 1) + (high < 0)
//   4. out  = sat8(r); sat = 1 when r is outside [-128, 127]
//
// `shift` is the instruction's whole 8-bit field: values above 31 follow the same formula on
// unbounded integers (ISA.md), which gives 0 for every shift >= 33. Shifts are clamped to 63,
// where the 64-bit datapath below already gives that result.
module requant (
    input  wire [31:0] x,        // accumulator, two's complement
    input  wire [31:0] mult,     // multiplier, two's complement
    input  wire [7:0]  shift,    // right shift, unsigned
    output wire [7:0]  y,        // sat8(r), two's complement
    output wire        sat       // r was outside [-128, 127]
);

localparam [63:0] NUDGE_POS = 64'h0000_0000_4000_0000;   //  2^30
localparam [63:0] NUDGE_NEG = 64'hFFFF_FFFF_C000_0001;   //  1 - 2^30
localparam [63:0] TRUNC_ADJ = 64'h0000_0000_7FFF_FFFF;   //  2^31 - 1: rounds a floor toward zero

// step 1: the exact product (the low 64 bits of the product of the sign-extended operands)
wire        [63:0] x_64    = {{32{x[31]}}, x};
wire        [63:0] mult_64 = {{32{mult[31]}}, mult};
wire        [63:0] product = x_64 * mult_64;

// step 2: rounding doubling high multiply
wire               overflow = (x == 32'h8000_0000) && (mult == 32'h8000_0000);
wire        [63:0] nudged   = product + (product[63] ? NUDGE_NEG : NUDGE_POS);
// trunc(v / 2^31) = floor((v + 2^31 - 1) / 2^31) for a negative v
wire        [63:0] trunc_in = nudged[63] ? nudged + TRUNC_ADJ : nudged;
wire        [63:0] quot31   = {{31{trunc_in[63]}}, trunc_in[63:31]};
wire        [31:0] high     = overflow ? 32'h7FFF_FFFF : quot31[31:0];

// step 3: rounding shift right, ties away from zero
wire         [5:0] shift_c   = (shift > 8'd63) ? 6'd63 : shift[5:0];
wire signed [63:0] high_64   = {{32{high[31]}}, high};
wire        [63:0] mask      = (64'd1 << shift_c) - 64'd1;
wire        [63:0] rem       = high_64 & mask;
wire        [63:0] threshold = (mask >> 1) + {63'd0, high[31]};
wire signed [63:0] shifted   = high_64 >>> shift_c;
wire        [63:0] r         = shifted + {63'd0, (rem > threshold)};

// step 4: saturate to int8
wire               r_neg   = r[63];
wire               too_low = r_neg && (r[62:7] != {56{1'b1}});
wire               too_big = !r_neg && (r[62:7] != 56'd0);

assign sat = too_low || too_big;
assign y   = too_low ? 8'h80 : (too_big ? 8'h7F : r[7:0]);

// the division by 2^31 drops trunc_in's low bits, and high keeps the low 32 bits of the
// quotient: |high| < 2^31 except in the overflow case handled above
wire unused_requant = &{1'b0, trunc_in[30:0], quot31[63:32]};

endmodule

`default_nettype wire
