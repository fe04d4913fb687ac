`default_nettype none
`include "chip_defs.vh"
// systolic_array: ARRAY_N x ARRAY_N output-stationary int8 processing elements.
//
// Row i's operand enters PE(i, 0) on a_in[8*i +: 8] and moves right; column j's operand enters
// PE(0, j) on b_in[8*j +: 8] and moves down; PE(i, j) keeps acc[i][j]. The caller skews the
// inputs: feeding A[i][t] to row i and B[t][j] to column j in beat t + i (resp. t + j) makes
// PE(i, j) add A[i][t] * B[t][j] in beat t + i + j, so k beats of input and 2*ARRAY_N - 2 beats
// of zeros to drain leave every accumulator complete.
module systolic_array #(
    parameter ARRAY_N = `ARRAY_N_DEFAULT    // rows and columns of processing elements
) (
    input  wire                         clk,
    input  wire                         rst,
    input  wire                         clear,    // zero every accumulator (one cycle)
    input  wire                         en,       // one beat

    input  wire [8*ARRAY_N-1:0]         a_in,     // row i at [8*i +: 8], int8
    input  wire [8*ARRAY_N-1:0]         b_in,     // column j at [8*j +: 8], int8
    output wire [32*ARRAY_N*ARRAY_N-1:0] acc      // acc[i][j] at [32*(i*ARRAY_N + j) +: 32]
);

initial begin
    `CHECK_RANGE("ARRAY_N", ARRAY_N, `ARRAY_N_LO, `ARRAY_N_HI)
end

// a_link[i][j] (at [8*(i*(ARRAY_N+1) + j) +: 8]) enters PE(i, j) from the left;
// b_link[i][j] (at [8*(i*ARRAY_N + j) +: 8]) enters PE(i, j) from above.
wire [8*ARRAY_N*(ARRAY_N+1)-1:0] a_link;
wire [8*(ARRAY_N+1)*ARRAY_N-1:0] b_link;

genvar i, j;
generate
    for (i = 0; i < ARRAY_N; i = i + 1) begin : g_edge
        assign a_link[8*(i*(ARRAY_N+1)) +: 8] = a_in[8*i +: 8];
        assign b_link[8*i +: 8]               = b_in[8*i +: 8];
    end

    for (i = 0; i < ARRAY_N; i = i + 1) begin : g_row
        for (j = 0; j < ARRAY_N; j = j + 1) begin : g_col
            pe u_pe (
                .clk   (clk),
                .rst   (rst),
                .clear (clear),
                .en    (en),
                .a_in  (a_link[8*(i*(ARRAY_N+1) + j) +: 8]),
                .b_in  (b_link[8*(i*ARRAY_N + j) +: 8]),
                .a_out (a_link[8*(i*(ARRAY_N+1) + j + 1) +: 8]),
                .b_out (b_link[8*((i+1)*ARRAY_N + j) +: 8]),
                .acc   (acc[32*(i*ARRAY_N + j) +: 32])
            );
        end
    end
endgenerate

// the operands leaving the right-hand column and the bottom row go nowhere
wire [8*ARRAY_N-1:0] a_leaving;
generate
    for (i = 0; i < ARRAY_N; i = i + 1) begin : g_leave
        assign a_leaving[8*i +: 8] = a_link[8*(i*(ARRAY_N+1) + ARRAY_N) +: 8];
    end
endgenerate
wire unused_edges = &{1'b0, a_leaving, b_link[8*ARRAY_N*ARRAY_N +: 8*ARRAY_N]};

endmodule

`default_nettype wire
