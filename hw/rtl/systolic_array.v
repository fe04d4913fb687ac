`default_nettype none
`include "chip_defs.vh"
// systolic_array: ARRAY_N x ARRAY_N output-stationary int8 processing elements.
//
// Row i's operand enters PE(i, 0) on a_in[8*i +: 8] and moves right; column j's operand enters
// PE(0, j) on b_in[8*j +: 8] and moves down; PE(i, j) keeps acc[i][j], read on acc_rd when
// acc_idx = i*ARRAY_N + j (combinational: the same cycle); acc_idx = ARRAY_N*ARRAY_N reads 0,
// and a larger one is not to be asked for. The caller skews the
// inputs: feeding A[i][t] to row i and B[t][j] to column j in beat t + i (resp. t + j) makes
// PE(i, j) add A[i][t] * B[t][j] in beat t + i + j, so k beats of input and 2*ARRAY_N - 2 beats
// of zeros to drain leave every accumulator complete.
//
// The operands move through arrays of 8-bit links and the accumulators stay one net each: a wide
// bus assembled from PE ports (a_link[8*k +: 8], acc[32*p +: 32]) would cost Icarus a
// strength-resolving copy of the whole bus for every PE's every beat, a fifth of a run.
module systolic_array #(
    parameter ARRAY_N = `ARRAY_N_DEFAULT    // rows and columns of processing elements
) (
    input  wire                 clk,
    input  wire                 rst,
    input  wire                 clear,      // zero every accumulator (one cycle)
    input  wire                 en,         // one beat

    input  wire [8*ARRAY_N-1:0] a_in,       // row i at [8*i +: 8], int8
    input  wire [8*ARRAY_N-1:0] b_in,       // column j at [8*j +: 8], int8
    input  wire [$clog2(ARRAY_N*ARRAY_N+1)-1:0] acc_idx,    // i*ARRAY_N + j
    output wire [31:0]          acc_rd      // acc[i][j]
);

localparam NN = ARRAY_N * ARRAY_N;

initial begin
    /* verilator coverage_off */    // parameter checks: only a bad parameter reaches their $finish
    `CHECK_RANGE("ARRAY_N", ARRAY_N, `ARRAY_N_LO, `ARRAY_N_HI)
    /* verilator coverage_on */
end

wire [7:0]  a_link [0:ARRAY_N*(ARRAY_N+1)-1];    // into PE(i, j) at i*(ARRAY_N+1) + j
wire [7:0]  b_link [0:(ARRAY_N+1)*ARRAY_N-1];    // into PE(i, j) at i*ARRAY_N + j
wire [31:0] acc    [0:NN];                       // PE(i, j)'s at i*ARRAY_N + j, then 0

genvar i, j;
generate
    for (i = 0; i < ARRAY_N; i = i + 1) begin : g_edge
        assign a_link[i*(ARRAY_N+1)] = a_in[8*i +: 8];
        assign b_link[i]             = b_in[8*i +: 8];
    end

    for (i = 0; i < ARRAY_N; i = i + 1) begin : g_row
        for (j = 0; j < ARRAY_N; j = j + 1) begin : g_col
            pe u_pe (
                .clk   (clk),
                .rst   (rst),
                .clear (clear),
                .en    (en),
                .a_in  (a_link[i*(ARRAY_N+1) + j]),
                .b_in  (b_link[i*ARRAY_N + j]),
                .a_out (a_link[i*(ARRAY_N+1) + j + 1]),
                .b_out (b_link[(i+1)*ARRAY_N + j]),
                .acc   (acc[i*ARRAY_N + j])
            );
        end
    end
endgenerate

assign acc[NN] = 32'd0;
assign acc_rd  = acc[acc_idx];

endmodule

`default_nettype wire
