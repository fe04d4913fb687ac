`default_nettype none
// matrix_unit_harness: the cocotb toplevel of the matrix unit's block test: matrix_unit wired to
// the SRAM (read port A, the write port) as chip_top wires it.
//
// A test backdoor-writes u_sram.mem[i], raises cmd_matmul for one cycle with the fields held,
// waits for done and reads the SRAM back through the backdoor. The harness logs every SRAM
// write with its cycle since the command (u_sram_writes: write_log.v) and counts the clamped
// requant outputs the unit reports (n_sat), cleared by cmd_matmul.
module matrix_unit_harness #(
    parameter ARRAY_N    = 4,       // the systolic array is ARRAY_N x ARRAY_N
    parameter K_MAX      = 64,      // the longest reduction
    parameter SRAM_WORDS = 4096     // SRAM words
) (
    input  wire        clk,
    input  wire        rst,

    input  wire        cmd_matmul,
    input  wire [15:0] cmd_a,
    input  wire [15:0] cmd_b,
    input  wire [15:0] cmd_c,
    input  wire [7:0]  cmd_m,
    input  wire [7:0]  cmd_k,
    input  wire [7:0]  cmd_n,
    input  wire [7:0]  cmd_flags,
    input  wire [7:0]  cmd_shift,
    input  wire [31:0] cmd_mult,
    output wire        done,

    output reg  [31:0] n_sat
);

localparam SRAM_AW = $clog2(SRAM_WORDS);

wire [SRAM_AW-1:0]    sram_raddr, sram_waddr;
wire [32*ARRAY_N-1:0] sram_rdata;    // the wide port: ARRAY_N words
wire [31:0]           sram_wdata, sram_rdata_b;
wire                  sram_we, sat;

matrix_unit #(
    .ARRAY_N (ARRAY_N),
    .K_MAX   (K_MAX),
    .SRAM_AW (SRAM_AW)
) u_matrix_unit (
    .clk        (clk),
    .rst        (rst),
    .cmd_matmul (cmd_matmul),
    .cmd_a      (cmd_a),
    .cmd_b      (cmd_b),
    .cmd_c      (cmd_c),
    .cmd_m      (cmd_m),
    .cmd_k      (cmd_k),
    .cmd_n      (cmd_n),
    .cmd_flags  (cmd_flags),
    .cmd_shift  (cmd_shift),
    .cmd_mult   (cmd_mult),
    .done       (done),
    .sat        (sat),
    .sram_raddr (sram_raddr),
    .sram_rdata (sram_rdata),
    .sram_we    (sram_we),
    .sram_waddr (sram_waddr),
    .sram_wdata (sram_wdata)
);

wire               sram_a_bad, sram_b_bad;    // the parity checks' (no fault here)
sram #(
    .SRAM_WORDS (SRAM_WORDS),
    .LANES      (ARRAY_N)
) u_sram (
    .clk       (clk),
    .rd_a_addr (sram_raddr),
    .rd_a_data (sram_rdata),
    .rd_a_bad  (sram_a_bad),
    .rd_b_addr ({SRAM_AW{1'b0}}),
    .rd_b_data (sram_rdata_b),
    .rd_b_bad  (sram_b_bad),
    .wr_en     (sram_we),
    .wr_addr   (sram_waddr),
    .wr_data   (sram_wdata)
);

write_log #(
    .ADDR_W (SRAM_AW),
    .DEPTH  (SRAM_WORDS)    // a command writes each word at most once
) u_sram_writes (
    .clk   (clk),
    .rst   (rst),
    .start (cmd_matmul),
    .we    (sram_we),
    .addr  (sram_waddr),
    .data  (sram_wdata)
);

always @(posedge clk) begin
    if (rst || cmd_matmul) begin
        n_sat <= 32'd0;
    end else begin
        n_sat <= n_sat + {31'd0, sat};
    end
end

wire unused_matrix_unit_harness = &{1'b0, sram_rdata_b, sram_a_bad, sram_b_bad};

endmodule

`default_nettype wire
