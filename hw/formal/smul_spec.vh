// The shared multiplier specification of the datapath proofs (requant.sv, pe.sv): the exact
// product of two two's-complement integers, A_W and B_W bits, as an A_W + B_W-bit integer,
// which holds every product of such operands. Written as the definition, not as any RTL does it.
module smul_spec #(
    parameter A_W = 8,
    parameter B_W = 8
) (
    input  wire signed [A_W-1:0]     a,
    input  wire signed [B_W-1:0]     b,
    output wire signed [A_W+B_W-1:0] p
);

assign p = a * b;    // signed operands, a result as wide as the product: exact

endmodule
