`default_nettype none
// vector_unit_harness: the cocotb toplevel of the vector unit's block test: vector_unit wired to
// the SRAM (both read ports, the write port) as chip_top wires it.
//
// A test backdoor-writes u_sram.mem[i], raises one of cmd_vadd, cmd_vmax, cmd_argmax for one
// cycle with the fields held, waits for done and reads the SRAM back through the backdoor. The
// harness logs every SRAM write with its cycle since the command (u_sram_writes: write_log.v)
// and counts the clamped VADD outputs the unit reports (n_sat), cleared by any command.
module vector_unit_harness #(
    parameter SRAM_WORDS = 4096     // SRAM words
) (
    input  wire        clk,
    input  wire        rst,

    input  wire        cmd_vadd,
    input  wire        cmd_vmax,
    input  wire        cmd_argmax,
    input  wire [15:0] cmd_a,
    input  wire [15:0] cmd_b,
    input  wire [15:0] cmd_c,
    input  wire [15:0] cmd_len,
    output wire        done,

    output reg  [31:0] n_sat
);

localparam SRAM_AW = $clog2(SRAM_WORDS);

wire [SRAM_AW-1:0] sram_raddr_a, sram_raddr_b, sram_waddr;
wire [31:0]        sram_rdata_a, sram_rdata_b, sram_wdata;
wire               sram_we, sat;

wire starting = cmd_vadd || cmd_vmax || cmd_argmax;

vector_unit #(
    .SRAM_AW (SRAM_AW)
) u_vector_unit (
    .clk          (clk),
    .rst          (rst),
    .cmd_vadd     (cmd_vadd),
    .cmd_vmax     (cmd_vmax),
    .cmd_argmax   (cmd_argmax),
    .cmd_a        (cmd_a),
    .cmd_b        (cmd_b),
    .cmd_c        (cmd_c),
    .cmd_len      (cmd_len),
    .done         (done),
    .sat          (sat),
    .sram_raddr_a (sram_raddr_a),
    .sram_rdata_a (sram_rdata_a),
    .sram_raddr_b (sram_raddr_b),
    .sram_rdata_b (sram_rdata_b),
    .sram_we      (sram_we),
    .sram_waddr   (sram_waddr),
    .sram_wdata   (sram_wdata)
);

wire               sram_a_bad, sram_b_bad;    // the parity checks' (no fault here)
sram #(
    .SRAM_WORDS (SRAM_WORDS)
) u_sram (
    .clk       (clk),
    .rd_a_addr (sram_raddr_a),
    .rd_a_data (sram_rdata_a),
    .rd_a_bad  (sram_a_bad),
    .rd_b_addr (sram_raddr_b),
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
    .start (starting),
    .we    (sram_we),
    .addr  (sram_waddr),
    .data  (sram_wdata)
);

always @(posedge clk) begin
    if (rst || starting) begin
        n_sat <= 32'd0;
    end else begin
        n_sat <= n_sat + {31'd0, sat};
    end
end

wire unused_vector_unit_harness = &{1'b0, sram_a_bad, sram_b_bad};

endmodule

`default_nettype wire
