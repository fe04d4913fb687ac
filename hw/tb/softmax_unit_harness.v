`default_nettype none
// softmax_unit_harness: the cocotb toplevel of the softmax unit's block test: softmax_unit wired
// to the SRAM (read port A, the write port) as chip_top wires it.
//
// A test backdoor-writes u_sram.mem[i], raises cmd_softmax for one cycle with the fields held,
// waits for done and reads the SRAM back through the backdoor. The harness logs every SRAM
// write with its cycle since the command (u_sram_writes: write_log.v) and keeps what the unit
// reports, cleared by cmd_softmax: exp-table lookups (n_lookups) and the largest lookup index
// (max_index, what the controller keeps as ev_sm_range).
module softmax_unit_harness #(
    parameter SRAM_WORDS = 4096,    // SRAM words
    parameter SM_MAX     = 256      // the longest vector
) (
    input  wire        clk,
    input  wire        rst,

    input  wire        cmd_softmax,
    input  wire [15:0] cmd_a,
    input  wire [15:0] cmd_c,
    input  wire [15:0] cmd_len,
    output wire        done,

    output reg  [31:0] n_lookups,
    output reg  [7:0]  max_index
);

localparam SRAM_AW = $clog2(SRAM_WORDS);

wire [SRAM_AW-1:0] sram_raddr, sram_waddr;
wire [31:0]        sram_rdata, sram_wdata, sram_rdata_b;
wire               sram_we, exp_valid;
wire [7:0]         exp_index;

softmax_unit #(
    .SRAM_AW (SRAM_AW),
    .SM_MAX  (SM_MAX)
) u_softmax_unit (
    .clk         (clk),
    .rst         (rst),
    .cmd_softmax (cmd_softmax),
    .cmd_a       (cmd_a),
    .cmd_c       (cmd_c),
    .cmd_len     (cmd_len),
    .done        (done),
    .exp_valid   (exp_valid),
    .exp_index   (exp_index),
    .sram_raddr  (sram_raddr),
    .sram_rdata  (sram_rdata),
    .sram_we     (sram_we),
    .sram_waddr  (sram_waddr),
    .sram_wdata  (sram_wdata)
);

wire               sram_a_bad, sram_b_bad;    // the parity checks' (no fault here)
sram #(
    .SRAM_WORDS (SRAM_WORDS)
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
    .start (cmd_softmax),
    .we    (sram_we),
    .addr  (sram_waddr),
    .data  (sram_wdata)
);

always @(posedge clk) begin
    if (rst || cmd_softmax) begin
        n_lookups <= 32'd0;
        max_index <= 8'd0;
    end else begin
        n_lookups <= n_lookups + {31'd0, exp_valid};
        if (exp_valid && (exp_index > max_index)) begin
            max_index <= exp_index;
        end
    end
end

wire unused_softmax_unit_harness = &{1'b0, sram_rdata_b, sram_a_bad, sram_b_bad};

endmodule

`default_nettype wire
