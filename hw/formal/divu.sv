`default_nettype none
// Formal properties of divu (hw/rtl/divu.v): every division leaves QUO_W cycles after it
// entered, with the quotient and remainder of the plain arithmetic (the exact ones when the
// quotient fits QUO_W bits, else all ones and dividend - divisor * (2^QUO_W - 1)), for every
// dividend and divisor, given the unit's contract: the divisor is held while any division is
// in the pipeline. Proven at DIV_W = 12, QUO_W = 4 (the chip's 32 and 7 change no logic but the
// widths; a 32-bit divider does not close in the solver's time).
module divu_fv #(
    parameter DIV_W = 12,    // dividend, divisor and remainder width
    parameter QUO_W = 4      // quotient width: pipeline stages
) (
    input wire             clk,
    input wire             rst,
    input wire             in_valid,
    input wire [DIV_W-1:0] dividend,
    input wire [DIV_W-1:0] divisor
);

wire             out_valid;
wire [QUO_W-1:0] quotient;
wire [DIV_W-1:0] remainder;

divu #(
    .DIV_W (DIV_W),
    .QUO_W (QUO_W)
) dut (
    .clk       (clk),
    .rst       (rst),
    .in_valid  (in_valid),
    .dividend  (dividend),
    .divisor   (divisor),
    .out_valid (out_valid),
    .quotient  (quotient),
    .remainder (remainder)
);

// the specification, one division at a time, carried alongside the pipeline
localparam WIDE = DIV_W + QUO_W;
wire [WIDE-1:0]  limit    = {{QUO_W{1'b0}}, divisor} << QUO_W;
wire             fits     = (divisor != 0) && ({{QUO_W{1'b0}}, dividend} < limit);
wire [WIDE-1:0]  all_ones = {{DIV_W{1'b0}}, {QUO_W{1'b1}}};
wire [WIDE-1:0]  times    = {{QUO_W{1'b0}}, divisor} * all_ones;
wire [QUO_W-1:0] spec_q   = fits ? dividend / divisor : {QUO_W{1'b1}};
wire [DIV_W-1:0] spec_r   = fits ? dividend % divisor : dividend - times[DIV_W-1:0];

reg [QUO_W-1:0] f_valid;
reg [QUO_W-1:0] f_q [0:QUO_W-1];
reg [DIV_W-1:0] f_r [0:QUO_W-1];
reg             f_fits [0:QUO_W-1];
integer i;
always @(posedge clk) begin
    if (rst) begin
        f_valid <= 0;
    end else begin
        f_valid <= {f_valid[QUO_W-2:0], in_valid};
    end
    f_q[0] <= spec_q;
    f_r[0] <= spec_r;
    f_fits[0] <= fits;
    for (i = 1; i < QUO_W; i = i + 1) begin
        f_q[i] <= f_q[i-1];
        f_r[i] <= f_r[i-1];
        f_fits[i] <= f_fits[i-1];
    end
end

reg f_past_valid = 1'b0;
always @(posedge clk) f_past_valid <= 1'b1;

// the contract: a reset first; the divisor held while a division is in the pipeline
always @(*) if (!f_past_valid) assume (rst);
always @(posedge clk) begin
    if (f_past_valid && !rst && (f_valid[QUO_W-2:0] != 0 || $past(in_valid))) begin
        DIVISOR_HELD: assume (divisor == $past(divisor));
    end
end

always @(posedge clk) begin
    if (f_past_valid && !$past(rst) && !rst) begin
        // a result leaves exactly QUO_W cycles after its division entered, and only then
        RESULT_TIMING: assert (out_valid == f_valid[QUO_W-1]);
        if (out_valid) begin
            QUOTIENT: assert (quotient == f_q[QUO_W-1]);
            REMAINDER: assert (remainder == f_r[QUO_W-1]);
        end
    end
end

// the preconditions are reachable: an exact division with a remainder, and one that overflows
always @(posedge clk) begin
    if (f_past_valid && !rst) begin
        EXACT_WITH_REMAINDER: cover (out_valid && f_fits[QUO_W-1] && remainder != 0);
        OUT_OF_RANGE: cover (out_valid && !f_fits[QUO_W-1]);
    end
end

endmodule

`default_nettype wire
